package selection

import (
	"errors"
	"fmt"
	"strings"
)

// The kinds of load errors; an *Error wraps one of them, so errors.Is tells them apart.
var (
	ErrSyntax      = errors.New("not a selection tree") // bad JSON, a value that is not an object, too deep
	ErrUnknown     = errors.New("unknown operator or container")
	ErrNumber      = errors.New("bad operator value")          // a number that does not parse, a value the operator lacks
	ErrMixed       = errors.New("siblings of different types") // S04
	ErrIncomplete  = errors.New("incomplete subtree")          // S07
	ErrUnreachable = errors.New("branch never taken")
	ErrEmpty       = errors.New("subtree without a container") // S01: every leaf is a container
	ErrDuplicate   = errors.New("duplicate key")
	ErrParam       = errors.New("bad container parameter")
	ErrContainer   = errors.New("container rejected") // by Options.Check
)

// Error is a problem in a selection file, with where it is: the keys from the top of the file
// down to the offending one, and the line.
type Error struct {
	File string   // set by Load
	Line int      // 1-based; 0 when not known
	Path []string // keys from the top level down; empty for the top-level object
	Kind error    // one of the Err values
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("selection: ")
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if len(e.Path) > 0 {
		b.WriteString(PathString(e.Path))
	} else {
		b.WriteString("top level")
	}
	b.WriteString(": ")
	b.WriteString(e.Kind.Error())
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Kind }

// PathString joins keys as errors and traces show them: "collective=alltoall > comm_size<=8".
func PathString(keys []string) string { return strings.Join(keys, " > ") }
