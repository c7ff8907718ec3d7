package codec

import (
	"encoding/binary"
	"math"

	"github.com/charmgo/charm/internal/msgp"
)

// Writing: the shortest forms, as msgpack/v5 chooses them.

func appendUint(b []byte, n uint64) []byte {
	switch {
	case n <= msgp.PosFixMax:
		return append(b, byte(n))
	case n <= math.MaxUint8:
		return append(b, msgp.Uint8, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, msgp.Uint16), uint16(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, msgp.Uint32), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, msgp.Uint64), n)
}

func appendInt(b []byte, n int64) []byte {
	switch {
	case n >= 0:
		return appendUint(b, uint64(n))
	case n >= -32:
		return append(b, byte(n))
	case n >= math.MinInt8:
		return append(b, msgp.Int8, byte(n))
	case n >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, msgp.Int16), uint16(n))
	case n >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, msgp.Int32), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, msgp.Int64), uint64(n))
}

func appendArrayLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, msgp.FixArrLo+byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, msgp.Arr16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, msgp.Arr32), uint32(n))
}

func appendStrLen(b []byte, n int) []byte {
	switch {
	case n < 32:
		return append(b, msgp.FixStrLo+byte(n))
	case n <= math.MaxUint8:
		return append(b, msgp.Str8, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, msgp.Str16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, msgp.Str32), uint32(n))
}

func appendBinLen(b []byte, n int) []byte {
	switch {
	case n <= math.MaxUint8:
		return append(b, msgp.Bin8, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, msgp.Bin16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, msgp.Bin32), uint32(n))
}
