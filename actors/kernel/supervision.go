package kernel

import "github.com/asynkron/protoactor-go/actor"

// StopOnFailure is the strategy for children that must never be restarted
// blindly (tool runners, executors, subagents): the failed child is stopped,
// its parent receives *actor.Terminated and turns the loss into a result.
// protoactor's default (restart ten times in ten seconds) would silently
// replay work with a fresh, empty state.
var StopOnFailure = actor.NewOneForOneStrategy(0, 0, func(reason any) actor.Directive {
	return actor.StopDirective
})
