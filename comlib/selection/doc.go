// Package selection chooses an algorithm from a selection tree written in JSON, in the form of
// MPICH's collective selection framework (Csel). It knows the operators that branch; what it
// chooses — a strategy, a router, a schedule — is the caller's business.
//
// # The file
//
// Every key of a JSON object is either an operator or a container, and every value is an object.
// An operator's value is the subtree taken when the operator holds; sibling operators are tried in
// file order and the first that holds wins. A container NAME=VALUE is a leaf: its children are its
// parameters, written NAME=VALUE with the value {}.
//
//	{
//	  "collective=alltoall": {
//	    "comm_size<=8": {
//	      "msg_size<=32768": {"strategy=eachtomany": {"router=direct": {}}},
//	      "msg_size=any":    {"strategy=direct": {}}
//	    },
//	    "comm_size=any": {"strategy=direct": {}}
//	  },
//	  "collective=any": {"strategy=direct": {}}
//	}
//
// The operators, and when each fact is known:
//
//	comm_size<=N  comm_size=pow2  comm_size=any   participants, at creation (coll_size is the same operator)
//	comm_type=intra  comm_type=inter  comm_type=any   one process or several, at creation
//	collective=alltoall|multicast|broadcast|stream|any   the kind of exchange, at creation
//	msg_size<=N   msg_size=any                    bytes, at each call
//
// N is decimal digits; <= includes N; pow2 holds for 1, 2, 4, …
//
// The containers are opaque (S02): Options.Containers names the container keys the caller
// understands (any other name is an error), and Options.Check, if set, vets each container as
// the file loads. A chosen container comes back as a Container{Key, Value, Params} for the caller
// to interpret.
//
// # Validation
//
// Parse and Load refuse, with an *Error that names the line and the path of keys to the problem
// (for instance "collective=alltoall > comm_size<=8 > msg_size<=256"), and wraps one of the Err
// kinds for errors.Is:
//
//   - operators of different types among siblings, or a container with siblings (S04);
//   - an incomplete subtree (S07): numeric operators must end with NAME=any; comm_type and
//     collective must give every value a branch or end with NAME=any — we treat
//     collective=any like the others so that a tree for one collective can fall back on a default;
//   - a branch that can never be taken (after an any, a bound no larger than an earlier one, a
//     value given twice);
//   - empty objects, operators without a container below them, containers with children that
//     are not parameters (S01);
//   - unknown operators, container names, operator values or numbers that do not parse;
//   - duplicate keys and parameters, JSON that is not objects all the way down, nesting deeper
//     than MaxDepth.
//
// Nothing in a file makes the package panic. A tree that loads selects a container for any
// facts (a fuzz test checks it).
//
// # Pruning and selection
//
// The facts known when a communicator is made (for Comlib, when a proxy is delegated) are
// CreationFacts; Prune resolves every operator on them, wherever it stands — before, after or
// between the others (S06) — and returns a smaller tree (S05, S08). Unknown facts (zero values)
// stay in the tree, and a pruned tree may be pruned again. Select then walks the pruned tree with
// the per-call CallFacts, and returns the container with a Trace: the branches taken, those Prune
// decided marked, and the number of nodes examined at this call. Walk evaluates the unpruned
// tree with all facts at once and chooses the same container; it is the per-call cost pruning
// saves. Fixed tells a pruned tree that chooses one container whatever the call facts, so that
// its caller can skip the walk, and the facts, altogether.
//
// A caller that knows the message size when the communicator is made — every call of a
// collective with one count, the way every MPI rank passes the same count so that each picks the
// same algorithm without agreeing — declares it in CreationFacts.MsgSize: Prune then resolves the
// msg_size operators too, and the tree left is one container (Fixed holds).
//
// A Tree is immutable and safe for concurrent use.
package selection
