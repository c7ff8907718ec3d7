package core

// WireDecoders reports whether the entry method behind method has the
// typed decoders of messages from other processes: of one envelope and,
// for a method that takes a message and returns nothing, of a run.
func WireDecoders(method any) (env, run bool, err error) {
	e, err := lookupEntry(method)
	if err != nil {
		return false, false, err
	}
	return e.wireEnv.Load() != nil, e.wireRun.Load() != nil, nil
}
