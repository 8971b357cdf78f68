package permission_test

import (
	"encoding/json"
	"fmt"

	"reasonix/core/permission"
)

func ExamplePolicy_Explain() {
	p, err := permission.NewPolicy("ask",
		[]string{"Bash(go test:*)", "Edit(docs/**)"},
		[]string{"Bash(git push:*)"},
		[]string{"Bash(rm -rf*)"},
		"/work/proj", "/home/me")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, command := range []string{"go test ./...", "go test ./... && rm -rf /", "git push", "make"} {
		args, _ := json.Marshal(map[string]string{"command": command})
		v := p.Explain(permission.PostureAsk, "bash", false, args)
		fmt.Printf("%-26s %-5s %s\n", command, v.Decision, v.Reason())
	}
	// Output:
	// go test ./...              allow allowed by rule Bash(go test:*)
	// go test ./... && rm -rf /  deny  blocked by deny rule Bash(rm -rf*)
	// git push                   ask   ask rule Bash(git push:*) requires approval
	// make                       ask   no rule matched; writers require approval
}

func ExamplePolicy_Suggest() {
	p := permission.Policy{Mode: permission.Ask, Root: "/work/proj"}
	fmt.Println(p.Suggest("bash", json.RawMessage(`{"command":"go test ./..."}`)))
	fmt.Println(p.Suggest("bash", json.RawMessage(`{"command":"go test ./... && go vet ./..."}`)))
	fmt.Println(p.Suggest("write_file", json.RawMessage(`{"path":"/work/proj/docs/intro.md"}`)))
	// Output:
	// [Bash(go test ./...) Bash(go test:*)]
	// [Bash(go test ./... && go vet ./...)]
	// [Edit(docs/intro.md) Edit]
}
