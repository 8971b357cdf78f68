// Package fleetcmd is `reasonix fleet`: the journalled fleets of a
// workspace, their tasks and results, resuming one, and reading a damaged
// journal for what it still holds.
package fleetcmd
