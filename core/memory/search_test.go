package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// seed saves a small, realistic memory set.
func seed(t *testing.T, s *Store) {
	t.Helper()
	mustSave(t, s, Project, "db-host", "Staging database host", "The staging DB is at db.internal:5432; use the read-only user.")
	mustSave(t, s, Project, "style", "Code style", "Use tabs in the Go code and keep the lines short.")
	mustSave(t, s, Project, "ci", "CI notes", "The CI runs on the main branch only.")
	mustSave(t, s, Project, "release", "Release steps", "Tag the release, then the pipeline publishes the binaries.")
	mustSave(t, s, User, "editor", "Editor", "The user prefers vim and short answers.")
}

func refs(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Ref())
	}
	return out
}

func TestSearchRanksAndFloors(t *testing.T) {
	t.Parallel()
	s, _, _, _ := testStore(t)
	seed(t, s)
	tests := []struct {
		query string
		want  []string
	}{
		{"staging database", []string{"project/db-host"}},
		// "the" is in every memory; only the real match survives the floor.
		{"where is the database", []string{"project/db-host"}},
		{"host of the staging db", []string{"project/db-host"}},
		{"vim", []string{"user/editor"}},
		// A name word is found as a word.
		{"HOST", []string{"project/db-host"}},
		// Diacritics are folded.
		{"réléase", []string{"project/release"}},
		// Query syntax is taken as words.
		{`"tabs" * (NEAR:`, []string{"project/style"}},
		{"kubernetes", nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			t.Parallel()
			hits, err := s.Search(context.Background(), tt.query)
			if err != nil {
				t.Fatal(err)
			}
			if got := refs(hits); strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("Search(%q) = %v, want %v", tt.query, got, tt.want)
			}
			for i := 1; i < len(hits); i++ {
				if hits[i].Score > hits[i-1].Score || hits[i].Score < hits[0].Score*RelativeFloor {
					t.Fatalf("hit %d score %v breaks order or floor (best %v)", i, hits[i].Score, hits[0].Score)
				}
			}
		})
	}
}

func TestSearchKeepsCloseHits(t *testing.T) {
	t.Parallel()
	s, _, _, _ := testStore(t)
	seed(t, s)
	hits, err := s.Search(context.Background(), "short")
	if err != nil {
		t.Fatal(err)
	}
	got := refs(hits)
	if len(got) != 2 || !strings.Contains(strings.Join(got, ","), "project/style") || !strings.Contains(strings.Join(got, ","), "user/editor") {
		t.Fatalf("Search(short) = %v, want both memories that say it", got)
	}
}

func TestSearchScopesShadowAndArchive(t *testing.T) {
	t.Parallel()
	s, _, _, _ := testStore(t)
	mustSave(t, s, User, "db-host", "", "user copy: postgres on laptop")
	mustSave(t, s, Project, "db-host", "", "project copy: postgres on staging")
	mustSave(t, s, Project, "gone", "", "postgres was here once")
	if _, err := s.Archive(Project, "gone"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	all, err := s.Search(ctx, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].Ref() != "project/db-host" || all[0].Hides != User || !strings.Contains(all[0].Body, "staging") {
		t.Fatalf("Search(all) = %+v, want the project memory only, noting the user one", all)
	}
	user, err := s.Search(ctx, "postgres", User)
	if err != nil {
		t.Fatal(err)
	}
	if len(user) != 1 || user[0].Ref() != "user/db-host" {
		t.Fatalf("Search(user) = %+v", user)
	}
}

func TestSearchLimitsAndErrors(t *testing.T) {
	t.Parallel()
	s, _, _, _ := testStore(t)
	for i := range MaxHits + 5 {
		mustSave(t, s, Project, fmt.Sprintf("m%02d", i), "", "the same shared fact")
	}
	hits, err := s.Search(context.Background(), "shared fact")
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != MaxHits {
		t.Fatalf("%d hits, want the cap %d", len(hits), MaxHits)
	}
	if _, err := s.Search(context.Background(), " ?! "); !errors.Is(err, ErrEmptyQuery) {
		t.Fatalf("Search of punctuation = %v, want ErrEmptyQuery", err)
	}
	empty, _, _, _ := testStore(t)
	if hits, err := empty.Search(context.Background(), "anything"); err != nil || len(hits) != 0 {
		t.Fatalf("Search of no memories = %v, %v", hits, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Search(ctx, "fact"); err == nil {
		t.Fatal("Search with a cancelled context succeeded")
	}
}
