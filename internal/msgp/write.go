package msgp

import (
	"encoding/binary"
	"math"
)

// MaxLen is the longest string, binary or array that msgpack can describe.
const MaxLen = math.MaxUint32

// TooLong reports whether a string, binary or array of n bytes or
// elements is longer than msgpack can describe.
func TooLong(n int) bool { return uint64(n) > MaxLen }

// AppendUint appends n in msgpack's shortest integer form.
func AppendUint(b []byte, n uint64) []byte {
	if n <= PosFixMax {
		return append(b, byte(n))
	}
	return appendUintLong(b, n)
}

func appendUintLong(b []byte, n uint64) []byte {
	switch {
	case n <= math.MaxUint8:
		return append(b, Uint8, byte(n))
	case n <= math.MaxUint16:
		return append(b, Uint16, byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		return append(b, Uint32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, Uint64, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// AppendInt appends n in msgpack's shortest integer form: a non-negative
// n as AppendUint writes it.
func AppendInt(b []byte, n int64) []byte {
	if uint64(n+32) <= PosFixMax+32 { // -32..127: one byte
		return append(b, byte(n))
	}
	return appendIntLong(b, n)
}

func appendIntLong(b []byte, n int64) []byte {
	switch {
	case n >= 0 && n <= math.MaxUint8:
		return append(b, Uint8, byte(n))
	case n >= 0 && n <= math.MaxUint16:
		return append(b, Uint16, byte(n>>8), byte(n))
	case n >= 0 && n <= math.MaxUint32:
		return append(b, Uint32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	case n >= 0:
		return append(b, Uint64, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	case n >= math.MinInt8:
		return append(b, Int8, byte(n))
	case n >= math.MinInt16:
		return append(b, Int16, byte(n>>8), byte(n))
	case n >= math.MinInt32:
		return append(b, Int32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, Int64, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// AppendBool appends true or false.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, True)
	}
	return append(b, False)
}

// AppendFloat32 appends v as a msgpack float (4 bytes).
func AppendFloat32(b []byte, v float32) []byte {
	return binary.BigEndian.AppendUint32(append(b, Float), math.Float32bits(v))
}

// AppendFloat64 appends v as a msgpack double (8 bytes).
func AppendFloat64(b []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(append(b, Double), math.Float64bits(v))
}

// AppendArrayHeader appends the header of an array of n elements; n must
// not be TooLong.
func AppendArrayHeader(b []byte, n int) []byte {
	switch {
	case n <= FixArrHi-FixArrLo:
		return append(b, FixArrLo+byte(n))
	case n <= math.MaxUint16:
		return append(b, Arr16, byte(n>>8), byte(n))
	}
	return append(b, Arr32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// AppendStrHeader appends the header of a string of n bytes; n must not
// be TooLong.
func AppendStrHeader(b []byte, n int) []byte {
	switch {
	case n <= FixStrHi-FixStrLo:
		return append(b, FixStrLo+byte(n))
	case n <= math.MaxUint8:
		return append(b, Str8, byte(n))
	case n <= math.MaxUint16:
		return append(b, Str16, byte(n>>8), byte(n))
	}
	return append(b, Str32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// AppendBinHeader appends the header of binary of n bytes; n must not be
// TooLong.
func AppendBinHeader(b []byte, n int) []byte {
	switch {
	case n <= math.MaxUint8:
		return append(b, Bin8, byte(n))
	case n <= math.MaxUint16:
		return append(b, Bin16, byte(n>>8), byte(n))
	}
	return append(b, Bin32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// UintSize is the length of AppendUint's encoding of n.
func UintSize(n uint64) int {
	switch {
	case n <= PosFixMax:
		return 1
	case n <= math.MaxUint8:
		return 2
	case n <= math.MaxUint16:
		return 3
	case n <= math.MaxUint32:
		return 5
	}
	return 9
}

// IntSize is the length of AppendInt's encoding of n.
func IntSize(n int64) int {
	switch {
	case n >= 0:
		return UintSize(uint64(n))
	case n >= -32:
		return 1
	case n >= math.MinInt8:
		return 2
	case n >= math.MinInt16:
		return 3
	case n >= math.MinInt32:
		return 5
	}
	return 9
}

// ArrayHeaderSize is the length of AppendArrayHeader's encoding.
func ArrayHeaderSize(n int) int {
	switch {
	case n <= FixArrHi-FixArrLo:
		return 1
	case n <= math.MaxUint16:
		return 3
	}
	return 5
}

// StrHeaderSize is the length of AppendStrHeader's encoding.
func StrHeaderSize(n int) int {
	switch {
	case n <= FixStrHi-FixStrLo:
		return 1
	case n <= math.MaxUint8:
		return 2
	case n <= math.MaxUint16:
		return 3
	}
	return 5
}

// BinHeaderSize is the length of AppendBinHeader's encoding.
func BinHeaderSize(n int) int {
	switch {
	case n <= math.MaxUint8:
		return 2
	case n <= math.MaxUint16:
		return 3
	}
	return 5
}
