package core

import (
	"reflect"
	"sync"
)

// ReductionRoot is the PE where reductions over a collection complete,
// and where an array's insertions and deletions are counted.
const ReductionRoot = 0

// migrating lists the tests, given by collection packages, that say
// whether a chare type's objects migrate (array's is: it embeds
// array.Element).
var migrating struct {
	sync.Mutex
	is []func(reflect.Type) bool
}

// RegisterMigrating tells chare.Register how to recognise chare types
// whose objects migrate (chare.Type.Migrates). Package array calls it for
// its Element; call it before registering the types it recognises (in an
// init function of the package that defines their base).
func RegisterMigrating(is func(t reflect.Type) bool) {
	migrating.Lock()
	defer migrating.Unlock()
	migrating.is = append(migrating.is, is)
}

// Migrates reports whether a registered test recognises t's objects as
// migrating.
func Migrates(t reflect.Type) bool {
	migrating.Lock()
	defer migrating.Unlock()
	for _, is := range migrating.is {
		if is(t) {
			return true
		}
	}
	return false
}
