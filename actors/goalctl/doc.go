// Package goalctl holds what the goal controller (package actors) measures
// and writes, none of it an actor: the Meter that holds each goal turn to
// what is left of the goal's budgets and runs its progress lease, and the
// AutoResearch notes written from what the goal does.
package goalctl
