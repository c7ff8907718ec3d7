package msgp

import "fmt"

// The msgpack type codes: the values of msgpack/v5's msgpcode variables, as
// constants so that readers and writers can switch on them (a test checks
// them against msgpcode). A name ending in Lo or Hi (Low for the negative
// fixints) is the first or last code of a range whose low bits hold the
// value or the length.
const (
	PosFixMax = 0x7f // 0x00..0x7f: the integers 0..127
	FixMapLo  = 0x80 // 0x80..0x8f: a map of 0..15 entries
	FixMapHi  = 0x8f
	FixArrLo  = 0x90 // 0x90..0x9f: an array of 0..15 elements
	FixArrHi  = 0x9f
	FixStrLo  = 0xa0 // 0xa0..0xbf: a string of 0..31 bytes
	FixStrHi  = 0xbf
	Nil       = 0xc0
	Unused    = 0xc1 // never used by msgpack
	False     = 0xc2
	True      = 0xc3
	Bin8      = 0xc4 // Bin8, Bin16, Bin32: a length of 1, 2 or 4 bytes, then the bytes
	Bin16     = 0xc5
	Bin32     = 0xc6
	Ext8      = 0xc7 // Ext8, Ext16, Ext32: a length of 1, 2 or 4 bytes, a type byte, the data
	Ext16     = 0xc8
	Ext32     = 0xc9
	Float     = 0xca // 4 bytes
	Double    = 0xcb // 8 bytes
	Uint8     = 0xcc // Uint8..Uint64 and Int8..Int64: 1, 2, 4 or 8 bytes, big-endian
	Uint16    = 0xcd
	Uint32    = 0xce
	Uint64    = 0xcf
	Int8      = 0xd0
	Int16     = 0xd1
	Int32     = 0xd2
	Int64     = 0xd3
	FixExt1   = 0xd4 // FixExt1..FixExt16: a type byte and 1, 2, 4, 8 or 16 bytes
	FixExt16  = 0xd8
	Str8      = 0xd9 // Str8, Str16, Str32: a length of 1, 2 or 4 bytes, then the bytes
	Str16     = 0xda
	Str32     = 0xdb
	Arr16     = 0xdc // Arr16, Arr32: a count of 2 or 4 bytes, then the elements
	Arr32     = 0xdd
	Map16     = 0xde // Map16, Map32: a count of 2 or 4 bytes, then the entries
	Map32     = 0xdf
	NegFixLow = 0xe0 // 0xe0..0xff: the integers -32..-1
)

// IsStr reports whether code c starts a string.
func IsStr(c byte) bool { return c >= FixStrLo && c <= FixStrHi || c >= Str8 && c <= Str32 }

// IsBin reports whether code c starts binary.
func IsBin(c byte) bool { return c >= Bin8 && c <= Bin32 }

// Describe names the msgpack type that code c starts.
func Describe(c byte) string {
	switch {
	case c <= PosFixMax, c >= NegFixLow, c >= Uint8 && c <= Int64:
		return "an integer"
	case c >= FixMapLo && c <= FixMapHi, c == Map16, c == Map32:
		return "a map"
	case c >= FixArrLo && c <= FixArrHi, c == Arr16, c == Arr32:
		return "an array"
	case IsStr(c):
		return "a string"
	case c == Nil:
		return "nil"
	case c == False, c == True:
		return "a bool"
	case IsBin(c):
		return "binary"
	case c == Float, c == Double:
		return "a float"
	case c >= Ext8 && c <= Ext32, c >= FixExt1 && c <= FixExt16:
		return "an extension"
	}
	return fmt.Sprintf("the unused code %#x", c)
}

// Found says what stood where a length was wanted: nil, or the length.
func Found(isNil bool, n int) string {
	if isNil {
		return "nil"
	}
	return fmt.Sprintf("%d", n)
}
