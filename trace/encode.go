package trace

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// appendEvent appends e as JSON, as encoding/json would write it (the
// same fields, omitempty alike, args in key order), without reflection:
// a busy run writes millions of events when the job ends, and through
// encoding/json that took seconds per million.
func appendEvent(b []byte, e *JSONEvent) ([]byte, error) {
	b = append(b, '{')
	if e.Name != "" {
		b = appendString(append(b, `"name":`...), e.Name)
		b = append(b, ',')
	}
	if e.Cat != "" {
		b = appendString(append(b, `"cat":`...), e.Cat)
		b = append(b, ',')
	}
	b = appendString(append(b, `"ph":`...), e.Ph)
	var err error
	if b, err = appendFloat(append(b, `,"ts":`...), e.TS); err != nil {
		return b, err
	}
	if e.Dur != nil {
		if b, err = appendFloat(append(b, `,"dur":`...), *e.Dur); err != nil {
			return b, err
		}
	}
	b = strconv.AppendInt(append(b, `,"pid":`...), int64(e.PID), 10)
	b = strconv.AppendInt(append(b, `,"tid":`...), int64(e.TID), 10)
	if e.ID != 0 {
		b = strconv.AppendUint(append(b, `,"id":`...), e.ID, 10)
	}
	if e.BP != "" {
		b = appendString(append(b, `,"bp":`...), e.BP)
	}
	if e.S != "" {
		b = appendString(append(b, `,"s":`...), e.S)
	}
	if len(e.Args) > 0 {
		b = append(b, `,"args":{`...)
		var kbuf [8]string
		keys := kbuf[:0]
		for k := range e.Args {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(appendString(b, k), ':')
			switch v := e.Args[k].(type) {
			case string:
				b = appendString(b, v)
			case int:
				b = strconv.AppendInt(b, int64(v), 10)
			default:
				j, err := json.Marshal(v)
				if err != nil {
					return b, err
				}
				b = append(b, j...)
			}
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// appendFloat writes f as encoding/json does.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		_, err := json.Marshal(f) // its error names the value
		return b, err
	}
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		j, err := json.Marshal(f)
		return append(b, j...), err
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64), nil
}

// appendString writes s as a JSON string: quotes, backslashes and control
// characters escaped, and (as encoding/json does) <, >, & and the line
// separators too; a string that is not UTF-8 goes through encoding/json,
// which replaces what is not.
func appendString(b []byte, s string) []byte {
	if !utf8.ValidString(s) {
		j, _ := json.Marshal(s) // a string always encodes
		return append(b, j...)
	}
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
