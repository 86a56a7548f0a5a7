package setting

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Values sent across a process boundary arrive as they were resolved:
// the same values, defaults and declarations, readable by kind.
func TestValuesJSONRoundTrip(t *testing.T) {
	decls := []Setting{
		{Name: "cache", Kind: Size, Default: "64MiB", Memory: true},
		{Name: "l0", Kind: Int, Default: "4", Min: "1"},
		{Name: "seed", Kind: Int},
		{Name: "flush", Kind: Duration, Default: "1s"},
	}
	v := MustResolve("engine x", decls, map[string]string{"l0": "8"})
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var got Values
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, v) {
		t.Fatalf("round trip changed the values:\nsent %+v\ngot  %+v", v, got)
	}
	if got.Int("l0") != 8 || got.Size("cache") != 64<<20 || got.Has("seed") {
		t.Errorf("decoded values read wrong: l0 %d, cache %d, seed set %v", got.Int("l0"), got.Size("cache"), got.Has("seed"))
	}
	if err := json.Unmarshal([]byte(`{"owner":"engine x","decls":[],"values":{"l0":"8"}}`), &got); err == nil {
		t.Error("a value without its declaration was accepted")
	}
	if b, err := json.Marshal(Values{}); err != nil || string(b) != "null" {
		t.Errorf("values no Resolve made encode as %s, %v; want null", b, err)
	}
}
