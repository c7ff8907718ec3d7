package core

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

type tnBox[T any] struct{ v T }

// typeName spells a type of chare's as chare's in any composite, and
// spells every other type exactly as reflect does.
func TestTypeNameComposites(t *testing.T) {
	for _, c := range []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[func(Context)](), "func(chare.Context)"},
		{reflect.TypeFor[func(Context, ...Callback) (Proxy[int], error)](), "func(chare.Context, ...chare.Callback) (chare.Proxy[int], error)"},
		{reflect.TypeFor[func() *Callback](), "func() *chare.Callback"},
		{reflect.TypeFor[struct{ P Proxy[int] }](), "struct { P chare.Proxy[int] }"},
		{reflect.TypeFor[struct {
			P Proxy[int] `msgpack:"p"`
			x []Callback
			Callback
		}](), `struct { P chare.Proxy[int] "msgpack:\"p\""; x []chare.Callback; chare.Callback }`},
		{reflect.TypeFor[[3]map[Callback]chan<- Callback](), "[3]map[chare.Callback]chan<- chare.Callback"},
		{reflect.TypeFor[chan (<-chan Callback)](), "chan (<-chan chare.Callback)"},
		{reflect.TypeFor[interface{ F(Callback) int }](), "interface { F(chare.Callback) int }"},
		{reflect.TypeFor[Proxy[tnBox[Callback]]](), "chare.Proxy[" + corePath + ".tnBox[" + charePath + ".Callback]]"},
		{reflect.TypeFor[tnBox[Proxy[int]]](), "core.tnBox[" + charePath + ".Proxy[int]]"}, // an unexported type is core's own
		{reflect.TypeFor[func(struct{ F func(Context) })](), "func(struct { F func(chare.Context) })"},
		{nil, "<nil>"},
	} {
		require.Equal(t, c.want, typeName(c.typ))
	}
	require.Equal(t, "github.com/charmgo/charm/chare", charePath)
	for _, typ := range []reflect.Type{
		reflect.TypeFor[func(int, ...string) (bool, error)](),
		reflect.TypeFor[func(func(int) string) func()](),
		reflect.TypeFor[struct {
			A int `json:"a"`
			b []string
			reflect.Value
		}](),
		reflect.TypeFor[struct{}](),
		reflect.TypeFor[chan (<-chan int)](),
		reflect.TypeFor[<-chan chan<- int](),
		reflect.TypeFor[map[string][2]*float64](),
		reflect.TypeFor[interface{ M(int) (string, error) }](),
		reflect.TypeFor[any](),
		reflect.TypeFor[error](),
	} {
		require.Equal(t, typ.String(), typeName(typ), "a type without chare's types reads as reflect writes it")
	}
}
