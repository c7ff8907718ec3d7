package selection

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Options says which containers the caller understands.
type Options struct {
	// Containers are the container names the caller parses, such as "strategy" or "router". A key
	// NAME=VALUE whose NAME is neither an operator nor one of these fails the load.
	Containers []string
	// Check, when not nil, is called with each container as the file is loaded; an error fails
	// the load with the container's path (for instance an unknown strategy or a parameter that
	// does not parse).
	Check func(Container) error
}

// MaxDepth bounds the nesting of a selection file.
const MaxDepth = 64

// MaxFileBytes bounds the size of a file Load reads: a larger file (or an
// endless one such as /dev/zero) is refused after reading one byte more.
const MaxFileBytes = 64 << 20

// Load reads and parses the selection file called name, of at most
// MaxFileBytes; errors name the file.
func Load(name string, o Options) (*Tree, error) {
	data, err := readFile(name, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("selection: %w", err)
	}
	t, err := Parse(data, o)
	var e *Error
	if errors.As(err, &e) {
		e.File = name
	}
	return t, err
}

// readFile reads the file called name, refusing it once it has read more
// than limit bytes.
func readFile(name string, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if st.Size() > limit {
			return nil, fmt.Errorf("%s has %d bytes, more than %d, the limit for a selection file", name, st.Size(), limit)
		}
		b.Grow(int(st.Size()) + 1)
	}
	n, err := b.ReadFrom(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if n > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes, the limit for a selection file", name, limit)
	}
	return b.Bytes(), nil
}

// Parse reads a selection tree from JSON and validates it (see the package documentation for
// the rules). Every problem is an *Error naming the path of keys to it. Its time is linear in
// the size of data.
func Parse(data []byte, o Options) (*Tree, error) {
	t, _, err := parse(data, o)
	return t, err
}

// parse is Parse, returning its parser too (for tests).
func parse(data []byte, o Options) (*Tree, *parser, error) {
	p := &parser{data: data, dec: json.NewDecoder(bytes.NewReader(data)), check: o.Check,
		containers: map[string]bool{}}
	t, err := p.parse(o)
	return t, p, err
}

func (p *parser) parse(o Options) (*Tree, error) {
	data := p.data
	for _, c := range o.Containers {
		if _, isOp := opNames[c]; isOp {
			return nil, fmt.Errorf("selection: container name %q is an operator", c)
		}
		if c == "" || strings.ContainsAny(c, "=<") {
			return nil, fmt.Errorf("selection: bad container name %q", c)
		}
		p.containers[c] = true
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &Error{Kind: ErrSyntax, Msg: "empty input"}
	}
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.syntax(nil, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, p.errAt(nil, ErrSyntax, "the top level must be an object, not %s", describe(tok))
	}
	root, err := p.object(nil)
	if err != nil {
		return nil, err
	}
	// Whatever follows the top-level object is an error of its own,
	// reported as such rather than as the decoder sees its first bytes
	// (trailing "abc" would be "invalid character 'a' in literal true").
	off := p.dec.InputOffset()
	if rest := bytes.TrimLeft(data[off:], " \t\r\n"); len(rest) > 0 {
		at := off + int64(len(data[off:])-len(rest))
		return nil, &Error{Line: p.line(at), Kind: ErrSyntax,
			Msg: fmt.Sprintf("%s after the top-level object (%d bytes; a file holds one object)", Short(string(rest)), len(rest))}
	}
	return &Tree{root: root}, nil
}

type parser struct {
	data       []byte
	dec        *json.Decoder
	containers map[string]bool
	check      func(Container) error

	// The line of an offset is counted from the last one asked for
	// (lineOff, at line lineNo) when it is further on, so that the line
	// numbers of a parse cost one pass over the data; scanned counts the
	// bytes these counts went over (for tests).
	lineOff int64
	lineNo  int
	scanned int64
}

func (p *parser) line(off int64) int {
	if off < 0 || off > int64(len(p.data)) {
		return 0
	}
	if off < p.lineOff || p.lineNo == 0 {
		p.lineOff, p.lineNo = 0, 1
	}
	p.scanned += off - p.lineOff
	p.lineNo += bytes.Count(p.data[p.lineOff:off], []byte{'\n'})
	p.lineOff = off
	return p.lineNo
}

func (p *parser) errAt(path []string, kind error, format string, args ...any) *Error {
	return &Error{Line: p.line(p.dec.InputOffset()), Path: append([]string(nil), path...), Kind: kind,
		Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) syntax(path []string, err error) *Error {
	e := p.errAt(path, ErrSyntax, "%v", err)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		e.Line = p.line(se.Offset)
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		e.Msg = "unexpected end of input"
	}
	return e
}

func describe(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			return "an array"
		}
		return fmt.Sprintf("%q", string(v))
	case string:
		return "the string " + Short(v)
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("%v", v)
	}
	return fmt.Sprintf("the number %v", tok)
}

// openObject reads the '{' that must start the value of the key at the end of path.
func (p *parser) openObject(path []string) error {
	tok, err := p.dec.Token()
	if err != nil {
		return p.syntax(path, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return p.errAt(path, ErrSyntax, "the value must be an object, not %s", describe(tok))
	}
	return nil
}

// entry is a key read from an object, before its siblings are checked together.
type entry struct {
	key  string
	off  int64 // where the key ends in the data: its line is counted only for an error
	br   branch
	leaf *Container
}

// object reads the members of an object whose '{' has been read, up to its '}'.
func (p *parser) object(path []string) (*choice, error) {
	if len(path) >= MaxDepth {
		return nil, p.errAt(path, ErrSyntax, "nested deeper than %d levels", MaxDepth)
	}
	var entries []entry
	seen := map[string]bool{}
	for p.dec.More() {
		tok, err := p.dec.Token()
		if err != nil {
			return nil, p.syntax(path, err)
		}
		key, ok := tok.(string)
		if !ok { // the decoder only yields strings as keys; be safe anyway
			return nil, p.errAt(path, ErrSyntax, "unexpected %s", describe(tok))
		}
		kpath := append(path[:len(path):len(path)], key)
		e := entry{key: key, off: p.dec.InputOffset()}
		if seen[key] {
			return nil, &Error{Line: p.line(e.off), Path: kpath, Kind: ErrDuplicate, Msg: "the key appears twice among its siblings"}
		}
		seen[key] = true
		name, value, le, hasEq := splitKey(key)
		if t, isOp := opNames[name]; isOp && hasEq {
			o, err := parseOp(t, name, value, le)
			if err != nil {
				return nil, &Error{Line: p.line(e.off), Path: kpath, Kind: ErrNumber, Msg: err.Error()}
			}
			if err := p.openObject(kpath); err != nil {
				return nil, err
			}
			next, err := p.object(kpath)
			if err != nil {
				return nil, err
			}
			e.br = branch{key: key, op: o, next: next}
		} else if p.containers[name] && hasEq && !le && value != "" {
			c, err := p.container(kpath, name, value)
			if err != nil {
				return nil, err
			}
			c.Params = append([]Param(nil), c.Params...)
			e.leaf = &c
		} else {
			return nil, &Error{Line: p.line(e.off), Path: kpath, Kind: ErrUnknown, Msg: p.unknown(key, name, hasEq, le)}
		}
		entries = append(entries, e)
	}
	if _, err := p.dec.Token(); err != nil { // the closing '}'
		return nil, p.syntax(path, err)
	}
	return p.siblings(path, entries)
}

func (p *parser) unknown(key, name string, hasEq, le bool) string {
	if _, isOp := opNames[name]; isOp {
		return Short(key) + ": an operator is NAME<=N or NAME=VALUE"
	}
	if p.containers[name] {
		return Short(key) + ": a container is NAME=VALUE"
	}
	names := make([]string, 0, len(p.containers))
	for c := range p.containers {
		names = append(names, c)
	}
	sort.Strings(names)
	return fmt.Sprintf("%s (operators: comm_size, coll_size, msg_size, comm_type, collective; containers: %s)",
		Short(key), strings.Join(names, ", "))
}

// container reads the parameters of a container, whose key has been read.
func (p *parser) container(path []string, name, value string) (Container, error) {
	c := Container{Key: name, Value: value}
	if err := p.openObject(path); err != nil {
		return c, err
	}
	given := map[string]bool{}
	for p.dec.More() {
		tok, err := p.dec.Token()
		if err != nil {
			return c, p.syntax(path, err)
		}
		key, _ := tok.(string)
		ppath := append(path[:len(path):len(path)], key)
		off := p.dec.InputOffset()
		pname, pvalue, le, ok := splitKey(key)
		if !ok || le || pname == "" {
			return c, &Error{Line: p.line(off), Path: ppath, Kind: ErrParam,
				Msg: "a container's children are parameters NAME=VALUE with the value {}"}
		}
		if given[pname] {
			return c, &Error{Line: p.line(off), Path: ppath, Kind: ErrDuplicate, Msg: fmt.Sprintf("parameter %s is given twice", Short(pname))}
		}
		given[pname] = true
		if err := p.openObject(ppath); err != nil {
			return c, err
		}
		tok, err = p.dec.Token()
		if err != nil {
			return c, p.syntax(ppath, err)
		}
		if d, ok := tok.(json.Delim); !ok || d != '}' {
			return c, &Error{Line: p.line(off), Path: ppath, Kind: ErrParam,
				Msg: "a parameter has no children: containers are leaves (its value must be {})"}
		}
		c.Params = append(c.Params, Param{Name: pname, Value: pvalue})
	}
	if _, err := p.dec.Token(); err != nil {
		return c, p.syntax(path, err)
	}
	if p.check != nil {
		if err := p.check(c); err != nil {
			return c, &Error{Line: p.line(p.dec.InputOffset()), Path: append([]string(nil), path...),
				Kind: ErrContainer, Msg: err.Error()}
		}
	}
	return c, nil
}

// siblings checks the members of one object together: one container alone, or operators of one
// type (S04), each reachable, ending in a branch that always holds (S07).
func (p *parser) siblings(path []string, es []entry) (*choice, error) {
	at := func(e entry, kind error, format string, args ...any) *Error {
		return &Error{Line: p.line(e.off), Path: append(path[:len(path):len(path)], e.key), Kind: kind,
			Msg: fmt.Sprintf(format, args...)}
	}
	if len(es) == 0 {
		e := p.errAt(path, ErrEmpty, "an empty object; every path must end in a container")
		return nil, e
	}
	for i, e := range es {
		if e.leaf == nil {
			continue
		}
		if len(es) == 1 {
			return &choice{leaf: e.leaf}, nil
		}
		other := es[0]
		if i == 0 {
			other = es[1]
		}
		return nil, at(e, ErrMixed, "the container %s has the sibling %s; a container must be alone", Short(e.key), Short(other.key))
	}
	c := &choice{typ: es[0].br.op.typ}
	var (
		maxLE   int64 = -1
		leKey   string
		pow2    string
		values  = map[string]string{}
		allKey  string // the key after which every case is covered
		domain  = c.typ.domain()
		covered bool
	)
	for _, e := range es {
		o := e.br.op
		if o.typ != c.typ {
			return nil, at(e, ErrMixed, "a %s operator beside the %s operator %s; siblings must be of one type", o.typ, c.typ, Short(es[0].key))
		}
		if covered {
			return nil, at(e, ErrUnreachable, "every case is taken by the branches up to %s", Short(allKey))
		}
		switch o.form {
		case formAny:
			covered, allKey = true, e.key
		case formLE:
			if o.n <= maxLE {
				return nil, at(e, ErrUnreachable, "%s before it takes every size it would", Short(leKey))
			}
			maxLE, leKey = o.n, e.key
		case formPow2:
			if pow2 != "" {
				return nil, at(e, ErrUnreachable, "%s before it takes every size it would", Short(pow2))
			}
			pow2 = e.key
		case formValue:
			if k, dup := values[o.value]; dup {
				return nil, at(e, ErrUnreachable, "%s before it takes this case", Short(k))
			}
			values[o.value] = e.key
			if len(values) == len(domain) {
				covered, allKey = true, e.key
			}
		}
		c.branches = append(c.branches, e.br)
	}
	if !covered {
		last := es[len(es)-1]
		if domain != nil {
			var missing []string
			for _, v := range domain {
				if _, ok := values[v]; !ok {
					missing = append(missing, c.typ.String()+"="+v)
				}
			}
			return nil, at(last, ErrIncomplete, "no branch for %s; add them or end with %s=any",
				strings.Join(missing, ", "), c.typ)
		}
		return nil, at(last, ErrIncomplete, "the last branch must be %s=any, so that every %s has a container", c.typ, c.typ)
	}
	return c, nil
}
