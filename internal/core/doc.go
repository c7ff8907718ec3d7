// Package core is the chare runtime: PEs, jobs, collections and their
// parts, envelopes and runs, the wire encoding, reductions, futures,
// callbacks, checkpoints, load measurement and tracing. Package chare is
// its program-facing side: it re-exports what a program needs (type
// aliases, functions that call these, constants), and its doc teaches the
// programming model.
//
// The framework's packages (group, array, lb, tram, comlib,
// tune/tunedebug) import core for what a program does not need: the
// plumbing of collections (Collection, Part, RegisterBuilder, Sequencer,
// OnBoot, OnJobEnd, PackObject, RunBuffer, ...), the functions that act
// on a PE for them (AddCollection, PartOf, Invoke, MemberArrived,
// RecheckReductions, Timed, TakeComm, ...; functions rather than methods,
// so that chare.PE shows a program only its own methods), and the
// process-wide registries that they fill in their init functions and the
// runtime reads when a job starts (RegisterFlag, RegisterMigrating).
// Being internal, none of it is part of the module's API; the compiler
// keeps programs out of it.
package core
