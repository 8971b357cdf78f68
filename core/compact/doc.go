// Package compact keeps a long conversation inside its model's context
// window without losing what the user said.
//
// A session's message list only grows, so each request repeats the
// previous one byte for byte and the provider's prompt cache keeps hitting.
// Compaction is the one point where that prefix changes, and it is tiered
// so that it changes as rarely and as little as it can (Policy.Decide):
//
//   - below the snip ratio nothing changes;
//   - at the snip ratio, stale tool results (those before the recent tail)
//     are cut to a head and a tail around a deterministic marker;
//   - at the compact ratio they are pruned to a short placeholder, and if
//     the prompt is still over that ratio a fold replaces the older
//     assistant and tool work with a digest the model writes (FoldPlan);
//   - at the force ratio the fold runs even when it would save little.
//
// Snip and prune never remove a message, so tool calls and results stay
// paired; they keep error and blocked results, never touch the recent
// tail, upgrade a snipped result to pruned and leave a pruned one alone. A
// fold keeps every user turn within the pin budget and every earlier
// digest verbatim and folds only the rest; its boundary never leaves a
// tool result without the call that produced it.
//
// Every compaction is a Compaction value: what it changed, by index, with
// the new content in full. The executor records it in the transcript after
// archiving the originals (WriteArchive), and Apply replays it on resume, so
// a resumed session rebuilds exactly the list the live one had.
package compact
