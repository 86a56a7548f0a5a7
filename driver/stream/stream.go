// Package stream is the line protocol in which a load generator running
// outside tierbench's process reports a driven run: the Ignite client JVM,
// and `tierbench drive` (locally, or as a Kubernetes Job whose pod log is
// the stream). Its standard output is one JSON object per line:
//
//	{"type":"ready"}
//	{"type":"loaded","records":N,"length_ns":L}
//	{"type":"interval","phase":"warmup|measured","index":i,"start_ns":s,"length_ns":l,
//	 "ops":{"put":n},"errors":{"put":e},"p50_ns":..,"p99_ns":..,"max_ns":..}
//	{"type":"error","op":"put","message":"..."}   the first failed operation
//	{"type":"hung","threads":n}                   clients still busy after the end
//	{"type":"final","phase":"measured","op":"put","ops":n,"errors":e,"length_ns":l,"hist":"<base64>"}
//	{"type":"done"}
//
// hist is the standard compressed HDR encoding (V2), base64, as hist.Decode
// reads it. Lines that are not JSON objects are ignored, so a producer's
// own log lines may share the stream. Writer writes it; Reader reads it
// back into the driver.Result the local driver returns, so a run measured
// elsewhere lands in the same results.
package stream
