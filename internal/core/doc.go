// Package core holds what the framework's packages (group, array, lb,
// tram, comlib, tune/tunedebug) share with package chare and a program
// does not: process-wide registries that those packages fill in their
// init functions and chare reads when a job starts, and the runtime's
// fixed facts. Being internal, it is not part of the module's API; the
// compiler keeps programs out of it.
package core
