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

// DropWireDecoders removes those decoders of the entry method behind
// method, as if this process had never sent to it (a test that runs
// again, -count, in one process starts without them).
func DropWireDecoders(method any) error {
	e, err := lookupEntry(method)
	if err != nil {
		return err
	}
	e.wireEnv.Store(nil)
	e.wireRun.Store(nil)
	return nil
}

// Headroom returns the collector's headroom this process keeps (nil if
// none).
func Headroom() []byte {
	headroomMu.Lock()
	defer headroomMu.Unlock()
	return headroom
}
