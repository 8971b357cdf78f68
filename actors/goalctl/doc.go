// Package goalctl is the goal controller: the actor that wraps a
// session's executor and runs a goal's turns one after another, holding
// each to what is left of the goal's budgets and progress lease (Meter),
// with the goal and todo tools' mailbox (GoalBox) and the AutoResearch
// notes written from what the goal does.
package goalctl
