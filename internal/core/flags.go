package core

import "sync"

// FlagDef is a runtime flag that a package of the module registered.
type FlagDef struct {
	Value bool               // takes a value
	Check func(string) error // validates the value, if set
}

var (
	flagsMu sync.Mutex
	flags   = map[string]FlagDef{}
)

// RegisterFlag adds a runtime flag that chare.ParseArgs takes out of the
// command line into chare.Config.Flags (packages such as lb register
// theirs in an init function). check, if set, validates the value: its
// error is ParseArgs's. A flag without a value gets "true".
func RegisterFlag(name string, takesValue bool, check func(string) error) {
	flagsMu.Lock()
	defer flagsMu.Unlock()
	flags[name] = FlagDef{takesValue, check}
}

// Flag returns the registered flag name.
func Flag(name string) (FlagDef, bool) {
	flagsMu.Lock()
	defer flagsMu.Unlock()
	d, ok := flags[name]
	return d, ok
}

// FlagNames returns the names of the registered flags, in no order.
func FlagNames() []string {
	flagsMu.Lock()
	defer flagsMu.Unlock()
	out := make([]string, 0, len(flags))
	for n := range flags {
		out = append(out, n)
	}
	return out
}

// packageFlags are the flags that packages of this module register when
// they are imported, by the package's import path: ParseArgs names the
// import a program needs for one of them.
var packageFlags = map[string]string{
	"balancer":  "github.com/charmgo/charm/lb",
	"lbperiod":  "github.com/charmgo/charm/lb",
	"lbdebug":   "github.com/charmgo/charm/lb",
	"lbcsv":     "github.com/charmgo/charm/lb",
	"lbsvg":     "github.com/charmgo/charm/lb",
	"lbcomm":    "github.com/charmgo/charm/lb",
	"tunedebug": "github.com/charmgo/charm/tune/tunedebug",
}

// FlagPackage returns the import path of the package of this module that
// registers the runtime flag name (without its dash), or "" if none does.
func FlagPackage(name string) string { return packageFlags[name] }

// PackageFlagNames returns the names FlagPackage knows, in no order.
func PackageFlagNames() []string {
	out := make([]string, 0, len(packageFlags))
	for n := range packageFlags {
		out = append(out, n)
	}
	return out
}
