// Package msgp is the one msgpack writer and reader of the runtime's own
// encoders: the frames between processes (actor/wire), the generated
// message codecs (actor/codec), the element indices (chare/indexcodec)
// and the headers of TRAM's block batches (tram) write and read msgpack
// through it, and the pre-decoding check of bytes for msgpack/v5
// (internal/mpcheck) uses its type codes. What these
// packages promise about msgpack is kept here, once.
//
// # Writing
//
// The Append functions append one value or header in msgpack's shortest
// form, the form msgpack/v5's Encoder chooses with compact integers: an
// integer in the fewest bytes that hold it (0..127 and -32..-1 in one
// byte), a string, binary or array header in the shortest form for its
// length. So one value always gives the same bytes (they can serve as a
// map key), and either side can be read by msgpack/v5. The Size
// functions return the lengths the Append functions write, so that a
// buffer can be sized once. Lengths above [MaxLen] cannot be written
// ([TooLong]); callers refuse them before they write.
//
// # Reading
//
// A [Reader] reads values strictly: every read checks the bytes that are
// left, every value must have the msgpack type asked for (nil is not 0, a
// string is not binary unless [Reader.Bytes] is asked, a negative integer
// is not a large unsigned one) and fit the range asked for. It accepts
// every form of an integer or a length that msgpack allows, not only the
// shortest, since other msgpack encoders may write longer ones. Readers
// alias the input rather than copy it. They never panic and never
// allocate on bad input, except the error itself; a declared array length
// is returned for the caller to check against the bytes left, with the
// size of its elements, before it allocates.
//
// Errors are *[Error]: a message that says what was wanted and what was
// found, and the byte where the value starts. Each caller adds its own
// context (the frame field and item for the wire, the struct field path
// for a codec, the index type for an index).
package msgp
