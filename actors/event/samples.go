package event

import (
	"encoding/json"
	"time"

	"reasonix/core/goal"
	"reasonix/core/provider"
)

// SampleMeta is a fixed Meta, so goldens do not depend on the clock.
func SampleMeta(seq int64, task string) Meta {
	return Meta{Seq: seq, Time: time.Date(2025, 1, 2, 3, 4, 5, 6000000, time.UTC), Session: "s1", Task: task}
}

// SampleUsage is the usage the samples report.
var SampleUsage = provider.Usage{PromptTokens: 120, CompletionTokens: 30, TotalTokens: 150, CacheHitTokens: 100, CacheMissTokens: 20, ReasoningTokens: 7}

// Samples returns one sample of every event type, every field set, fresh
// at each call: the golden files show each whole shape (omitempty fields
// included), and encoders that carry events (the worker wire) round-trip
// them all.
// TestGoldenCoversEveryType fails when a type with a Kind method is in
// neither this list nor commandSamples.
func Samples() []Event {
	return []Event{
		&SessionStarted{Meta: SampleMeta(1, ""), Model: "deepseek-chat", Cwd: "/ws", Transcript: "/home/u/.reasonix/sessions/s1.jsonl", Tools: []string{"bash", "read_file"}},
		&TextDelta{Meta: SampleMeta(2, ""), Text: "Hello"},
		&ReasoningDelta{Meta: SampleMeta(3, ""), Text: "thinking"},
		&ToolStarted{Meta: SampleMeta(4, ""), CallID: "c1", Tool: "bash", Args: `{"command":"make"}`},
		&ToolFinished{Meta: SampleMeta(5, ""), CallID: "c1", Tool: "bash", IsError: true, DurationMS: 42, Output: "exit 2", OutputBytes: 6},
		&UsageReported{Meta: SampleMeta(6, ""), Usage: SampleUsage, Total: SampleUsage},
		&Notice{Meta: SampleMeta(7, ""), Level: "warn", Message: "retrying in 2s"},
		&ErrorOccurred{Meta: SampleMeta(8, ""), Message: "model error", Detail: `{"error":{"message":"model error"}}`},
		&Retrying{Meta: SampleMeta(8, ""), Attempt: 2, MaxAttempts: 5, DelayMS: 2000, Reason: "429 Too Many Requests"},
		&TurnDone{Meta: SampleMeta(9, ""), Status: StatusFailed, Text: "partial", Error: "stream ended", Steps: 3, Usage: SampleUsage},
		&ApprovalRequested{Meta: SampleMeta(10, "f1.1"), RequestID: "s1/f1.1/c2", CallID: "c2", Tool: "bash", Args: `{"command":"make"}`,
			Reason: "bash needs approval", Suggestions: []string{"Bash(make)", "Bash(make:*)"}},
		&ApprovalResolved{Meta: SampleMeta(11, "f1.1"), RequestID: "s1/f1.1/c2", CallID: "c2", Decision: ApproveDeny, Reason: "approval_timeout_seconds"},
		&ToolWaiting{Meta: SampleMeta(12, ""), CallID: "c3", Tool: "edit", Args: `{"path":"a.go"}`, RequestID: "s1/c3"},
		&TurnStarted{Meta: SampleMeta(13, ""), Prompt: "fix the build"},
		&PromptQueued{Meta: SampleMeta(14, ""), Prompt: "then run the tests", Position: 1},
		&PromptRejected{Meta: SampleMeta(15, ""), Prompt: "now", Reason: "a turn is already running"},
		&PostureChanged{Meta: SampleMeta(16, ""), Posture: "auto"},
		&TaskQueued{Meta: SampleMeta(17, "f1.1+1"), Fleet: "f1.1+1", Prompt: "build it", Profile: "explore", Writer: true,
			Background: true, Name: "builder", Of: "f1.1"},
		&TaskStarted{Meta: SampleMeta(18, "f1.1"), Fleet: "f1", Model: "deepseek-chat", Worker: "build1", Attempt: 2},
		&TaskDone{Meta: SampleMeta(19, "f1.1"), Fleet: "f1", Status: TaskFailed, Error: "timed out", Steps: 4, DurationMS: 1500, Usage: SampleUsage,
			Worker: "build1", Attempt: 2},
		&TaskRequeued{Meta: SampleMeta(20, "f1.1"), Fleet: "f1", Worker: "build2", Attempt: 2, Reason: "worker build2 lost: no heartbeat answer for 3s"},
		&Lagged{Meta: Meta{Seq: 30, Time: SampleMeta(0, "").Time}, Dropped: 10, SinceSeq: 21, UntilSeq: 30},
		&ToolProgress{Meta: SampleMeta(31, ""), CallID: "c4", Server: "docs", Tool: "index", Progress: 3, Total: 10, Message: "indexing"},
		&ElicitationRequested{Meta: SampleMeta(32, ""), RequestID: "docs-1", Server: "docs", Message: "Which branch?", Mode: "form",
			Schema: json.RawMessage(`{"type":"object","properties":{"branch":{"type":"string","default":"main"}}}`), URL: "https://example.test/auth"},
		&MCPServerUpdated{Meta: SampleMeta(33, ""), Server: "docs", Source: "project", State: MCPRestarting, Tools: 4, Prompts: 1, Resources: 2,
			Error: "connection closed", Failures: 2},
		&CompactionStarted{Meta: SampleMeta(34, ""), Tier: "fold", Trigger: "auto", Tokens: 13200, Messages: 41},
		&Compacted{Meta: SampleMeta(35, ""), Tier: "fold", Trigger: "auto", TokensBefore: 13200, TokensAfter: 5100, Window: 16000,
			MessagesBefore: 88, MessagesAfter: 31, Archive: "/home/u/.reasonix/archive/20261201-120000.000000000.jsonl"},
		&PlanReady{Meta: Meta{Seq: 36, Time: SampleMeta(0, "").Time, Session: "s1", Role: RolePlanner}, Round: 1,
			Plan: "1. Add the flag in cmd/run.go.\n2. Run go test ./cmd/..."},
		&PlanProposed{Meta: SampleMeta(37, ""), Plan: "1. Add the flag.\n2. Test it."},
		&PlanStep{Meta: SampleMeta(38, ""), Step: "1", Summary: "added the flag"},
		&GoalStarted{Meta: SampleMeta(39, ""), Goal: "g20261201-120000000-s1", Objective: "make the tests pass", Strategy: "research",
			Resumed: true, MaxTurns: 200, MaxTokens: 500000, MaxTimeMS: 3600000, Research: "/ws/.reasonix/autoresearch/20261201-120000-make-the-tests-pass"},
		&GoalProgressed{Meta: SampleMeta(40, ""), Goal: "g20261201-120000000-s1", Turn: 3, Tokens: 4200, ElapsedMS: 61000,
			Report: "in_progress", Summary: "fixed two of five tests", Todo: 5, TodoDone: 2, NoProgress: 8, Nudged: true},
		&GoalEnded{Meta: SampleMeta(41, ""), Goal: "g20261201-120000000-s1", Status: "limit", Reason: "turn limit reached (200 turns)",
			Summary: "four of five tests pass", Turns: 200, Tokens: 410000, ElapsedMS: 3500000},
		&EffortChanged{Meta: SampleMeta(43, ""), Effort: "high"},
		&BackgroundResult{Meta: SampleMeta(45, ""), Agent: "f2.1", Name: "logs", Status: TaskOK, Text: "[Background task f2.1 (logs) ok]\nthree errors"},
		&TodoUpdated{Meta: SampleMeta(42, ""), Items: []goal.Item{{Content: "Reproduce the failure", Status: "completed"},
			{Content: "Fix the parser", Status: "in_progress"}, {Content: "Add a regression test", Status: "in_progress", Level: 1}}},
	}
}
