package journal

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestCheck: records as Append writes them have no damage; each way a
// harmed file can differ is named, with the record it is in, and the
// records around it are not blamed.
func TestCheck(t *testing.T) {
	t.Parallel()
	at := time.Unix(1700000000, 0)
	good := func(seq int64, kind, task, data string) Record {
		r := Record{Fleet: "s/f", Seq: seq, Kind: kind, Task: task, At: at}
		if data != "" {
			r.Data = json.RawMessage(data)
		}
		return r
	}
	tests := []struct {
		name string
		recs []Record
		want []string
	}{
		{"intact", []Record{good(1, KindSubmit, "", `{"tasks":[]}`), good(2, KindStart, "t1", ""), good(3, KindFinish, "t1", `{"status":"ok"}`)}, nil},
		{"payload not JSON", []Record{good(1, KindSubmit, "", `{}`), good(2, KindFinish, "t1", `{"status":"o`)},
			[]string{"record 2 (finish of t1): its payload is not JSON"}},
		{"unknown kind", []Record{good(1, KindSubmit, "", `{}`), good(2, "f\x00nish", "t1", "")},
			[]string{`record 2 (f` + "\x00" + `nish of t1): unknown kind "f\x00nish"`}},
		{"no time", []Record{good(1, KindSubmit, "", `{}`), {Fleet: "s/f", Seq: 2, Kind: KindReply, At: time.Unix(0, 0)}},
			[]string{"record 2 (reply): it has no time"}},
		{"records missing", []Record{good(1, KindSubmit, "", `{}`), good(4, KindStart, "t1", ""), good(6, KindReply, "", "")},
			[]string{"records 2-3 are missing", "record 5 is missing"}},
		{"the first missing", []Record{good(2, KindStart, "t1", "")}, []string{"record 1 is missing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, d := range Check(tt.recs) {
				got = append(got, d.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("damage %q, want %q", got, tt.want)
			}
		})
	}
}

// TestAppendRefusesNonJSON: a payload that would read back as damage is
// refused before it is written.
func TestAppendRefusesNonJSON(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if _, err := j.Append(ctx, Record{Fleet: "s/f", Kind: KindFinish, Task: "t1", Data: json.RawMessage(`{"status":`)}); !errors.Is(err, ErrNotJSON) {
		t.Fatalf("append: %v", err)
	}
	if recs, err := j.Records(ctx, "s/f"); err != nil || len(recs) != 0 {
		t.Fatalf("records %+v, err %v", recs, err)
	}
}
