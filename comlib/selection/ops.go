package selection

import (
	"fmt"
	"strings"
)

// CommType says whether a communicator spans one process or several.
type CommType string

// The values of comm_type; the empty CommType means not known.
const (
	Intra CommType = "intra" // every participant in one process
	Inter CommType = "inter" // participants in several processes
)

// Collective names the kind of exchange a tree is asked about.
type Collective string

// The values of collective; the empty Collective means not known.
const (
	Alltoall  Collective = "alltoall"
	Multicast Collective = "multicast"
	Broadcast Collective = "broadcast"
	Stream    Collective = "stream"
)

// opType is an operator's kind; siblings must share one (S04).
type opType uint8

const (
	opNone opType = iota
	opCommSize
	opMsgSize
	opCommType
	opCollective
)

var opNames = map[string]opType{
	"comm_size":  opCommSize,
	"coll_size":  opCommSize, // the seed's spelling; MPICH's code says comm_size
	"msg_size":   opMsgSize,
	"comm_type":  opCommType,
	"collective": opCollective,
}

func (t opType) String() string {
	switch t {
	case opCommSize:
		return "comm_size"
	case opMsgSize:
		return "msg_size"
	case opCommType:
		return "comm_type"
	case opCollective:
		return "collective"
	}
	return "container"
}

// domain lists the values of an operator with finitely many; nil for the numeric ones, which
// need a final NAME=any to be complete.
func (t opType) domain() []string {
	switch t {
	case opCommType:
		return []string{string(Intra), string(Inter)}
	case opCollective:
		return []string{string(Alltoall), string(Multicast), string(Broadcast), string(Stream)}
	}
	return nil
}

type opForm uint8

const (
	formAny   opForm = iota // NAME=any
	formLE                  // NAME<=N
	formPow2                // comm_size=pow2
	formValue               // comm_type=intra, collective=alltoall
)

type op struct {
	typ   opType
	form  opForm
	n     int64
	value string
}

// holds evaluates the operator on a fact: n for the sizes, s for the named values.
func (o op) holds(n int64, s string) bool {
	switch o.form {
	case formAny:
		return true
	case formLE:
		return n <= o.n
	case formPow2:
		return n > 0 && n&(n-1) == 0
	case formValue:
		return s == o.value
	}
	return false
}

// splitKey splits "name<=v" or "name=v"; le reports the "<=" form; ok is false without '='.
func splitKey(key string) (name, value string, le, ok bool) {
	i := strings.IndexByte(key, '=')
	if i < 0 {
		return strings.TrimSpace(key), "", false, false
	}
	name, value = key[:i], key[i+1:]
	if strings.HasSuffix(name, "<") {
		name, le = name[:len(name)-1], true
	}
	return strings.TrimSpace(name), strings.TrimSpace(value), le, true
}

// parseOp parses the key of an operator of type t; the error says what is wrong with the key.
func parseOp(t opType, name, value string, le bool) (op, error) {
	o := op{typ: t}
	if le {
		if t != opCommSize && t != opMsgSize {
			return o, fmt.Errorf("%s takes =VALUE, not <=", name)
		}
		n, err := parseCount(value)
		if err != nil {
			return o, fmt.Errorf("%s<=%s: %w", name, clip(value), err)
		}
		o.form, o.n = formLE, n
		return o, nil
	}
	if value == "any" {
		o.form = formAny
		return o, nil
	}
	switch t {
	case opCommSize:
		if value == "pow2" {
			o.form = formPow2
			return o, nil
		}
		return o, fmt.Errorf("%s=%s: want %s<=N, %s=pow2 or %s=any", name, clip(value), name, name, name)
	case opMsgSize:
		return o, fmt.Errorf("%s=%s: want %s<=N or %s=any", name, clip(value), name, name)
	}
	for _, v := range t.domain() {
		if v == value {
			o.form, o.value = formValue, value
			return o, nil
		}
	}
	return o, fmt.Errorf("%s=%s: unknown value (valid: %s, any)", name, clip(value), strings.Join(t.domain(), ", "))
}

// maxCount bounds the numbers in a file; sizes beyond 2^53 are surely a typo.
const maxCount = 1 << 53

// parseCount accepts decimal digits only: no sign, no exponent, no hex, no suffix.
func parseCount(s string) (int64, error) {
	if s == "" {
		return 0, fmt.Errorf("missing number")
	}
	var n int64
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%s is not a number of decimal digits", Short(s))
		}
		n = n*10 + int64(c-'0')
		if n > maxCount {
			return 0, fmt.Errorf("%s is too large (at most %d)", clip(s), int64(maxCount))
		}
	}
	return n, nil
}
