package comlib

import "github.com/charmgo/charm/chare"

// Flags.
const (
	// FlagDebug (-comlibdebug) logs error modes and recoveries, and each
	// instance's statistics when the job ends.
	FlagDebug = "comlibdebug"
)

func init() {
	chare.RegisterFlag(FlagDebug, false, nil)
}
