package selection

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Container is a leaf of the tree: the caller's choice (a strategy, a router, a schedule) and its
// parameters, uninterpreted (S02). The key "strategy=eachtomany" with the children
// {"router=mesh":{}} is Container{Key: "strategy", Value: "eachtomany", Params: [{router mesh}]}.
type Container struct {
	Key    string
	Value  string
	Params []Param // in file order; names are unique; shared with the tree, so read-only
}

// Param is one parameter of a container, written as the key "NAME=VALUE" with the value {}.
type Param struct {
	Name  string
	Value string
}

// Param returns the value of the parameter called name.
func (c Container) Param(name string) (string, bool) {
	for _, p := range c.Params {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

// String writes the container as "strategy=eachtomany(router=mesh)".
func (c Container) String() string {
	var b strings.Builder
	b.WriteString(c.Key)
	b.WriteByte('=')
	b.WriteString(c.Value)
	if len(c.Params) > 0 {
		b.WriteByte('(')
		for i, p := range c.Params {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(p.Name)
			b.WriteByte('=')
			b.WriteString(p.Value)
		}
		b.WriteByte(')')
	}
	return b.String()
}

// Tree is a validated selection tree. It is immutable: Prune returns a new tree, and a tree may be
// used from several goroutines.
type Tree struct {
	root *choice
}

// choice is one JSON object of the tree: either one container, or branches of one operator
// type tried in file order.
type choice struct {
	leaf     *Container
	typ      opType
	branches []branch
	pruned   []string // keys Prune decided on the way to this choice, outermost first
}

type branch struct {
	key  string // as written in the file
	op   op
	next *choice
}

// Size counts the nodes of the tree: the operator keys and the containers.
func (t *Tree) Size() int {
	if t == nil || t.root == nil {
		return 0
	}
	return t.root.size()
}

func (c *choice) size() int {
	if c.leaf != nil {
		return 1
	}
	n := 0
	for _, b := range c.branches {
		n += 1 + b.next.size()
	}
	return n
}

// Containers lists the distinct containers the tree can select, in file order, so that a caller
// can build its algorithm objects before the first call.
func (t *Tree) Containers() []Container {
	if t == nil || t.root == nil {
		return nil
	}
	var out []Container
	seen := map[string]bool{}
	var walk func(c *choice)
	walk = func(c *choice) {
		if c.leaf != nil {
			if s := c.leaf.String(); !seen[s] {
				seen[s] = true
				out = append(out, *c.leaf)
			}
			return
		}
		for _, b := range c.branches {
			walk(b.next)
		}
	}
	walk(t.root)
	return out
}

// MarshalJSON writes the tree back as a selection file, keys in order. A pruned tree is written
// without the branches Prune decided; Parse reads the output back to an equal tree.
func (t *Tree) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if t == nil || t.root == nil {
		b.WriteString("{}")
		return b.Bytes(), nil
	}
	t.root.write(&b)
	return b.Bytes(), nil
}

func writeKey(b *bytes.Buffer, key string) {
	q, _ := json.Marshal(key) // a string always marshals
	b.Write(q)
	b.WriteByte(':')
}

func (c *choice) write(b *bytes.Buffer) {
	b.WriteByte('{')
	if c.leaf != nil {
		writeKey(b, c.leaf.Key+"="+c.leaf.Value)
		b.WriteByte('{')
		for i, p := range c.leaf.Params {
			if i > 0 {
				b.WriteByte(',')
			}
			writeKey(b, p.Name+"="+p.Value)
			b.WriteString("{}")
		}
		b.WriteByte('}')
	}
	for i, br := range c.branches {
		if i > 0 {
			b.WriteByte(',')
		}
		writeKey(b, br.key)
		br.next.write(b)
	}
	b.WriteByte('}')
}
