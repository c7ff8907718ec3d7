// Package location is the location manager's logic: where one PE believes
// the elements of one chare array are, and what to do with a message for
// an element (deliver it, forward it, or hold it). It is pure: no runtime,
// no messages; package array drives it and sends what it decides.
//
// # The model
//
// Every element has a home PE, given by the array's map. The home always
// learns where the element is (the PE an element arrives at tells the
// home); other PEs keep a cache. Each piece of knowledge carries an epoch:
// the number of times the element has moved (or been inserted again), so
// that an older piece of news never overwrites a newer one.
//
// A message carries the epoch at which its sender believed the element to
// be on the destination PE. Every such belief is a true fact about the
// past (knowledge is only ever created by the PE that sent the element
// away, or by the PE it arrived at), which gives three rules on arrival:
//
//   - the element is here: deliver;
//   - this PE knows of a later location (its epoch is at least the
//     message's): forward there, or to the home once the message has been
//     forwarded MaxHops times (Charm++ forwards without bound; its users
//     hit long chains, UIUC-PPL/charm#2060 and #3997);
//   - this PE's knowledge is older than the message's: the element is on
//     its way here (or, on the home, the news of its arrival elsewhere is
//     on its way): hold the message until it arrives.
//
// Epochs only grow along a chain of forwards, so a message never goes in a
// circle, and it is held only where something it waits for is certain to
// come. Nothing is dropped: a message for an element that does not exist
// (yet) waits on its home until it is inserted.
//
// docs/design/location-protocol.md says why these rules are enough, and
// what holds for order, broadcasts and reductions while elements move.
package location
