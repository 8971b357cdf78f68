// Package openai implements the "openai" provider kind: any endpoint that
// speaks the OpenAI chat-completions streaming protocol, DeepSeek first.
// Importing the package registers the kind with the provider registry.
//
// Requests are encoded from fixed structs, so two equal provider.Requests
// always produce byte-identical bodies and the vendor's prompt cache keeps
// matching the shared prefix. Each message is encoded from its own fields
// alone, never from its position, so a message already sent is sent again
// as the same bytes in every later request and a growing conversation keeps
// its cached prefix.
//
// Every assistant message's reasoning_content is sent back verbatim in
// every later request, across user turns. DeepSeek's thinking mode
// requires it on each assistant message that made tool calls (omitting it
// is a 400 "Missing reasoning_content field") and ignores it elsewhere;
// plain answers keep theirs as well, so that no message's bytes depend on
// what came after it. Empty reasoning is omitted, so a model that produces
// none sends no field. Config.OmitReasoning (send_reasoning = false in the
// provider's config) sends no reasoning_content at all, for endpoints that
// reject the field.
//
// Stream returns an error, and no channel, when the request cannot be
// started: a bad request, a cancelled context, or a failure that persisted
// through the retries (a typed *StatusError for non-2xx replies). Retries
// use bounded exponential backoff with full jitter, honour Retry-After, and
// happen only before any response byte has been read. A 429 or a 503
// halves the endpoint's shared concurrency window, and a Retry-After
// closes a process-wide gate for that chat URL, so every request to the
// endpoint, from any Provider in the process, waits it out together
// instead of hammering the server.
//
// Once the response headers arrive with a 2xx status, everything else is
// reported on the channel: text and reasoning deltas as they come, complete
// tool calls in index order when the choice finishes, at most one usage
// chunk, and then exactly one terminal chunk (Done at "data: [DONE]", or
// Error for a cut connection, a malformed chunk, an in-stream API error, a
// stall longer than the configured timeout, or cancellation). A stream is
// never retried once it has started. The producing goroutine selects on
// ctx for every send, so cancelling ctx always releases it; after
// cancellation, chunks the consumer had not yet received may be dropped so
// that the terminal Error (wrapping ctx's error) still fits in the buffer.
//
// ListModels supports reachability checks such as "reasonix doctor".
package openai
