package comlib

import "github.com/charmgo/charm/internal/core"

// Flags.
const (
	// FlagDebug (-comlibdebug) logs error modes and recoveries, and each
	// instance's statistics when the job ends.
	FlagDebug = "comlibdebug"
)

func init() {
	core.RegisterFlag(FlagDebug, false, nil)
}
