// Package codec encodes the message bodies that travel between processes
// without reflecting on every value.
//
// [For] returns the codec of a type, chosen once per type:
//
//   - [Marshaler]: the type implements the msgp convention,
//     MarshalMsg(b []byte) ([]byte, error) on T or *T and
//     UnmarshalMsg(b []byte) ([]byte, error) on *T. Its bytes are its own
//     business (they need not be msgpack); UnmarshalMsg must consume them
//     all.
//   - [Generated]: the type is built only from booleans, integers, floats,
//     strings, byte slices, arrays, slices and structs of these, with
//     exported, untagged, non-embedded fields, and implements none of
//     msgpack's or encoding's marshaling interfaces. Its encoder and decoder
//     are compiled once from the type's layout and then read and write the
//     fields through their offsets. The bytes are msgpack, as msgpack/v5
//     writes them with array-encoded structs and compact integers, so
//     either side can be decoded by the other (the tests check both ways).
//     They are written and read by the runtime's one msgpack writer and
//     strict reader (package internal/msgp), as frames are.
//   - [Reflection]: everything else goes through msgpack/v5 (pooled
//     encoders, structs as arrays).
//
// Decoding is strict and total: a body that is truncated, has trailing
// bytes, holds the wrong msgpack type or a value out of the field's range
// gets an error that names the Go type and the field, and never a panic
// (a panic in a user's UnmarshalMsg or in msgpack/v5 is recovered into an
// error naming the type). Lengths are checked against the bytes that remain
// before a slice is allocated.
//
// Decoding allocates only what the value itself needs (strings, slices);
// a struct of fixed-size fields decodes with no allocation.
package codec
