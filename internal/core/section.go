package core

import (
	"errors"
	"fmt"
)

// Section is a subset of an array's elements (Charm++'s CkSectionID): a
// section proxy multicasts to them, and they can reduce among themselves.
type Section struct {
	ID      CollID // names the section's reductions
	Coll    CollID
	Members []any
	N       int          // the number of members
	set     map[any]bool // the members, built on first use on a PE
}

// NewSection makes a section of collection coll from the given member
// indices, which must be distinct.
func NewSection(from Context, coll CollID, members []any) (*Section, error) {
	pe, err := peFrom(from)
	if err != nil {
		return nil, err
	}
	if len(members) == 0 {
		return nil, errors.New("chare: a section needs at least one member")
	}
	l, err := PartOf(pe, coll)
	if err != nil {
		return nil, err
	}
	s := &Section{ID: NewCollID(pe), Coll: coll, Members: members, N: len(members)}
	seen := make(map[any]bool, len(members))
	for _, m := range members {
		if seen[m] {
			return nil, fmt.Errorf("chare: index %v appears twice in a section of %v", m, coll)
		}
		seen[m] = true
		if _, err := l.Locate(m); err != nil {
			return nil, err
		}
	}
	s.set = seen
	return s, nil
}

// sectionMembers returns the set of a section's members, decoding them if
// the section came in a message.
func (pe *PE) sectionMembers(s *Section) (map[any]bool, error) {
	if s.set != nil {
		return s.set, nil
	}
	c, err := JobCollection(pe.job, s.Coll)
	if err != nil {
		return nil, err
	}
	ms, err := pe.resolve(c, s.Members)
	if err != nil {
		return nil, err
	}
	set := map[any]bool{}
	for _, m := range ms.([]any) {
		set[m] = true
	}
	s.set = set
	return set, nil
}

// multicast sends one copy of the envelope to each PE that hosts members,
// listing the members there.
func (pe *PE) multicast(e Envelope) error {
	h := e.Header()
	s := h.Section
	if s == nil {
		return errors.New("chare: multicast through a section proxy without a section")
	}
	l, err := PartOf(pe, s.Coll)
	if err != nil {
		return err
	}
	members := s.Members
	if len(members) > 0 {
		if _, raw := members[0].(rawIndex); raw { // a section that came in a message
			c, err := JobCollection(pe.job, s.Coll)
			if err != nil {
				return err
			}
			r, err := pe.resolve(c, members)
			if err != nil {
				return err
			}
			members = r.([]any)
		}
	}
	byPE := map[int][]any{}
	var order []int
	for _, m := range members {
		where, err := l.Locate(m)
		if err != nil {
			return err
		}
		if byPE[where] == nil {
			order = append(order, where)
		}
		byPE[where] = append(byPE[where], m)
	}
	for _, dest := range order {
		c := e.clone()
		c.Header().Index = byPE[dest] // see Header.Members
		pe.ap.Send(dest, c)
	}
	return nil
}
