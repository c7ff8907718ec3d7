package reducer

import (
	"errors"
	"fmt"
)

// User registers and returns a reducer named name whose Combine is
// combine; contributions are its partial results as they are (Lift is the
// identity, whatever the index) and so is its result. combine must be
// associative and commutative, since partial results are combined in no
// fixed order. It is an error if the name is taken, by a built-in or by an
// earlier call: register each user reducer once, e.g. in a package-level
// variable, so that every process of the program knows it by its name.
func User(name string, combine func(a, b any) (any, error)) (Reducer, error) {
	return UserFull(name, nil, combine, nil)
}

// UserFull is User with a lift, applied to each contribution and its
// contributor's index, and a result, applied to the final partial result.
// A nil lift or result is the identity. Errors from the three functions
// are returned wrapped with the reducer's name.
func UserFull(name string,
	lift func(value, index any) (any, error),
	combine func(a, b any) (any, error),
	result func(partial any) (any, error),
) (Reducer, error) {
	u, err := newUser(name, lift, combine, result)
	if err != nil {
		return nil, err
	}
	return register(u)
}

// UserWithCodec is UserFull for a reducer whose partial results cross
// processes with codec, for instance CodecOf[P]() for partial results of
// a type P. A reducer made by User or UserFull has no Codec; another way
// to cross processes is a Reducer type of your own that implements Codec.
func UserWithCodec(name string,
	lift func(value, index any) (any, error),
	combine func(a, b any) (any, error),
	result func(partial any) (any, error),
	codec Codec,
) (Reducer, error) {
	if codec == nil {
		return nil, fmt.Errorf("reducer %s: UserWithCodec needs a codec", name)
	}
	u, err := newUser(name, lift, combine, result)
	if err != nil {
		return nil, err
	}
	return register(&userCodec{user: u, codec: codec})
}

func newUser(name string,
	lift func(value, index any) (any, error),
	combine func(a, b any) (any, error),
	result func(partial any) (any, error),
) (*user, error) {
	if name == "" {
		return nil, errors.New("reducer: a user reducer needs a name")
	}
	if combine == nil {
		return nil, fmt.Errorf("reducer %s: a user reducer needs a combine function", name)
	}
	return &user{name: name, lift: lift, combine: combine, result: result}, nil
}

func register(r Reducer) (Reducer, error) {
	if err := Register(r); err != nil {
		return nil, err
	}
	return r, nil
}

type user struct {
	name    string
	lift    func(value, index any) (any, error)
	combine func(a, b any) (any, error)
	result  func(partial any) (any, error)
}

// Name returns the name the reducer was registered under.
func (u *user) Name() string { return u.name }

// Lift applies the user's lift, if any.
func (u *user) Lift(value, index any) (any, error) {
	if u.lift == nil {
		return value, nil
	}
	return u.wrap(u.lift(value, index))
}

// Combine applies the user's combine.
func (u *user) Combine(a, b any) (any, error) { return u.wrap(u.combine(a, b)) }

// Result applies the user's result, if any.
func (u *user) Result(partial any) (any, error) {
	if u.result == nil {
		return partial, nil
	}
	return u.wrap(u.result(partial))
}

func (u *user) wrap(v any, err error) (any, error) {
	if err != nil {
		return nil, fmt.Errorf("reducer %s: %w", u.name, err)
	}
	return v, nil
}

// whyNoCodec says how to cross processes.
func (u *user) whyNoCodec() string {
	return "it was made by User or UserFull; make it with UserWithCodec, or implement Codec on a Reducer type of your own"
}
