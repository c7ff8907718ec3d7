package array

import "github.com/charmgo/charm/chare"

// Section addresses a subset of an array's elements: a send through it is
// a multicast to the members; members reduce among themselves with
// ContributeTo(s.Info(), ...).
type Section[T any, I comparable] struct {
	chare.Proxy[T]
	info *chare.Section
}

// Section makes a section of the array from a list of member indices.
func (p Proxy[T, I]) Section(from chare.Context, members []I) (Section[T, I], error) {
	ms := make([]any, len(members))
	for k, m := range members {
		ms[k] = m
	}
	s, err := chare.NewSection(from, p.Route().Coll, ms)
	if err != nil {
		return Section[T, I]{}, err
	}
	return Section[T, I]{p.WithRoute(chare.Route{Kind: chare.KindSection, Coll: p.Route().Coll, Section: s}), s}, nil
}

// Info returns the section's description, for ContributeTo.
func (s Section[T, I]) Info() *chare.Section { return s.info }

// Delegate returns a copy of the section proxy whose sends go to d.
func (s Section[T, I]) Delegate(d chare.Delegate) Section[T, I] {
	return Section[T, I]{s.Proxy.Delegate(d), s.info}
}
