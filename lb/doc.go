// Package lb is load balancing: measurement of the load of array
// elements and PEs, load-balancing steps (AtSync, periodic, manual),
// strategies, and reports.
//
// Strategies are pure functions from a Snapshot (objects with their load
// and PE, the PEs' background load, speed and availability, optionally the
// communication graph) to a Placement; they are tested without a runtime.
package lb
