package selection

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
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
		for i, k := range e.Path {
			if i > 0 {
				b.WriteString(" > ")
			}
			b.WriteString(clip(k))
		}
	} else {
		b.WriteString("top level")
	}
	b.WriteString(": ")
	b.WriteString(e.Kind.Error())
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(clipTo(e.Msg, maxMsg))
	}
	return b.String()
}

// How much of a key (maxQuote) and of an error's message (maxMsg) an
// error quotes: a key of a hundred megabytes makes an error of a line.
const (
	maxQuote = 48
	maxMsg   = 400
)

// Short returns s quoted as errors quote a key or a value: whole if it is
// short, else its first few dozen bytes and its length.
func Short(s string) string {
	if len(s) <= maxQuote {
		return strconv.Quote(s)
	}
	return strconv.Quote(cut(s, maxQuote)) + fmt.Sprintf("… (%d bytes)", len(s))
}

// clip is Short without the quotes.
func clip(s string) string { return clipTo(s, maxQuote) }

func clipTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return cut(s, n) + fmt.Sprintf("… (%d bytes)", len(s))
}

// cut returns the first n bytes of s at most, not splitting a character.
func cut(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func (e *Error) Unwrap() error { return e.Kind }

// PathString joins keys as errors and traces show them: "collective=alltoall > comm_size<=8".
func PathString(keys []string) string { return strings.Join(keys, " > ") }
