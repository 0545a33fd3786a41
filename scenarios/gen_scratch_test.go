package scenarios

import (
	"fmt"
	"testing"
)

func TestScratchGenerate(t *testing.T) {
	sp, err := DefaultSpace()
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i := range 3000 {
		tr, err := sp.Generate(1, i)
		if err != nil {
			t.Fatal(err)
		}
		src := tr.Marshal()
		if i == 5 {
			fmt.Println(string(src))
		}
		if _, err := Parse(fmt.Sprintf("gen-%d.toml", i), src); err != nil {
			bad++
			if bad < 8 {
				t.Errorf("%d: %v", i, err)
			}
		}
	}
	t.Logf("%d invalid", bad)
}
