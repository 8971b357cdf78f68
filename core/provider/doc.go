// Package provider defines how Reasonix talks to a model: the message and
// request types, the streaming Chunk contract, and a registry that maps a
// provider kind (such as "openai") to a factory. Concrete kinds live in
// subpackages and register themselves from init, so this package never
// imports them.
//
// Stream contract: a Provider's Stream returns a channel that carries zero or
// more Text, Reasoning, ToolCall and Usage chunks followed by exactly one
// terminal chunk (Done or Error), after which the channel is closed. The
// producer never blocks forever: cancelling ctx ends the stream promptly, so
// a consumer that stops reading must cancel ctx.
package provider
