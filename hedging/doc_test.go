package hedging_test

import (
	"os"
	"strings"
	"testing"
)

// The code block doc.go opens with is ExampleClient_Do's body, verbatim,
// so it compiles from the exported API and its output is checked.
func TestDocOpensWithTheCompiledExample(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := os.ReadFile("example_do_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var block []string
	for _, line := range strings.Split(string(doc), "\n") {
		if code, ok := strings.CutPrefix(line, "//\t"); ok {
			block = append(block, "\t"+code)
		} else if len(block) > 0 {
			break
		}
	}
	e := string(ex)
	i := strings.Index(e, "func ExampleClient_Do() {\n")
	j := strings.Index(e[i:], "\n}\n")
	if len(block) == 0 || i < 0 || j < 0 {
		t.Fatal("doc.go has no code block or example_do_test.go no ExampleClient_Do")
	}
	body := e[i+len("func ExampleClient_Do() {\n") : i+j]
	if got := strings.Join(block, "\n"); got != body {
		t.Errorf("doc.go's example differs from ExampleClient_Do:\n%s\n---\n%s", got, body)
	}
}
