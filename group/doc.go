// Package group provides chare groups (one object, a branch, per PE) and
// node groups (one branch per process).
//
//	type Counter struct {
//		group.Branch[Counter]
//		n int
//	}
//
//	g, err := group.New[Counter](self)           // a branch on every PE
//	chare.Send(self, g, (*Counter).Add, 1)       // broadcast to every branch
//	chare.Send(self, g.At(3), (*Counter).Add, 1) // to the branch on PE 3
//
// Inside a branch, ThisProxy and PE give the group and the branch's PE;
// LocalBranch returns the branch on the caller's PE (ckLocalBranch).
// Branches contribute to reductions with Contribute, one contribution per
// PE, indexed by PE.
package group
