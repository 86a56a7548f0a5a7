package messaging

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

// HL7 v2 text: segments end with a carriage return, fields are split by
// '|' and components by '^' (the encoding characters MSH-2 declares).
const (
	segmentEnd = '\r'
	fieldSep   = '|'
	compSep    = '^'
)

// Names, places and lab tests the generator draws from: plausible HL7 v2
// ORU^R01 results, not real people.
var (
	lastNames  = []string{"SMITH", "JOHNSON", "WILLIAMS", "BROWN", "JONES", "GARCIA", "MILLER", "DAVIS", "RODRIGUEZ", "MARTINEZ", "LOPEZ", "WILSON"}
	firstNames = []string{"JAMES", "MARY", "ROBERT", "PATRICIA", "JOHN", "JENNIFER", "MICHAEL", "LINDA", "DAVID", "ELIZABETH", "AISHA", "WEI"}
	streets    = []string{"MAIN", "OAK", "PINE", "MAPLE", "CEDAR", "ELM", "LAKE", "HILL"}
	cities     = []string{"SPRINGFIELD^IL", "RIVERTON^WY", "FAIRVIEW^TN", "MADISON^WI", "GEORGETOWN^TX", "SALEM^OR"}
	wards      = []string{"MED", "SURG", "ICU", "CARD", "ONC", "PEDS"}
	classes    = []string{"I", "O", "E"}
	// patientClass maps PV1-2 to a receiving system's codes.
	patientClass = map[string]string{"I": "IP", "O": "OP", "E": "ER"}
	labTests     = []labTest{
		{"2345-7", "GLUCOSE", "mg/dL", 70, 99},
		{"2160-0", "CREATININE", "mg/dL", 0.6, 1.3},
		{"718-7", "HEMOGLOBIN", "g/dL", 12, 16},
		{"6690-2", "WBC", "10*3/uL", 4, 11},
		{"2951-2", "SODIUM", "mmol/L", 135, 145},
		{"2823-3", "POTASSIUM", "mmol/L", 3.5, 5.1},
		{"2075-0", "CHLORIDE", "mmol/L", 98, 107},
		{"2028-9", "CO2", "mmol/L", 22, 29},
		{"3094-0", "BUN", "mg/dL", 7, 20},
		{"17861-6", "CALCIUM", "mg/dL", 8.6, 10.3},
		{"777-3", "PLATELETS", "10*3/uL", 150, 400},
		{"789-8", "RBC", "10*6/uL", 4.2, 5.9},
	}
)

// labTest is one observation: its LOINC code, name, units and normal range.
type labTest struct {
	code, name, units string
	lo, hi            float64
}

// epoch dates the messages: message seq of a service is stamped seq
// seconds after it, so a seeded message is the same text in every run.
var epoch = time.Date(2024, 1, 1, 8, 0, 0, 0, time.UTC)

// minNTE is the shortest NTE segment: "NTE|1||", one character, the end.
const minNTE = len("NTE|1||") + 2

// minOBX is how many OBX segments every message has, whatever its size.
const minOBX = 2

// generator makes HL7 v2 messages: each is a function of the seed, the
// service and the sequence number alone, so a seeded run sends the same
// messages whichever client carries them. Not safe for concurrent use.
type generator struct {
	pcg rand.PCG
	rng *rand.Rand
}

func newGenerator() *generator {
	g := &generator{}
	g.rng = rand.New(&g.pcg)
	return g
}

// message appends to dst message seq of service: MSH, PID, PV1, OBR, OBX
// segments while they fit, and an NTE that pads it to exactly size bytes
// (size >= minBytes leaves room for all of them).
func (g *generator) message(dst []byte, seed uint64, service int, seq int64, size int) []byte {
	g.pcg.Seed(seed^(uint64(service)+1)*0x9E3779B97F4A7C15, uint64(seq))
	start := len(dst)
	ts := epoch.Add(time.Duration(seq) * time.Second)
	r := g.rng
	dst = append(dst, "MSH|^~\\&|LAB"...)
	dst = strconv.AppendInt(dst, int64(service), 10)
	dst = append(dst, "|HOSP|ROUTER|HOSP|"...)
	dst = ts.AppendFormat(dst, "20060102150405")
	dst = append(dst, "||ORU^R01^ORU_R01|S"...)
	dst = strconv.AppendInt(dst, int64(service), 10)
	dst = append(dst, '-')
	dst = strconv.AppendInt(dst, seq, 10)
	dst = append(dst, "|P|2.5.1\r"...)

	dst = append(dst, "PID|1||"...)
	dst = appendDigits(dst, r, 8)
	dst = append(dst, "^^^HOSP^MR||"...)
	dst = append(dst, pick(r, lastNames)...)
	dst = append(dst, compSep)
	dst = append(dst, pick(r, firstNames)...)
	dst = append(dst, compSep, byte('A'+r.IntN(26)), fieldSep, fieldSep)
	dst = epoch.AddDate(-18-r.IntN(70), 0, -r.IntN(365)).AppendFormat(dst, "20060102")
	dst = append(dst, fieldSep, "FM"[r.IntN(2)], fieldSep, fieldSep, fieldSep)
	dst = strconv.AppendInt(dst, int64(1+r.IntN(9999)), 10)
	dst = append(dst, ' ')
	dst = append(dst, pick(r, streets)...)
	dst = append(dst, " ST^^"...)
	dst = append(dst, pick(r, cities)...)
	dst = append(dst, compSep)
	dst = appendDigits(dst, r, 5)
	dst = append(dst, "||(555)"...)
	dst = appendDigits(dst, r, 3)
	dst = append(dst, '-')
	dst = appendDigits(dst, r, 4)
	dst = append(dst, segmentEnd)

	dst = append(dst, "PV1|1|"...)
	dst = append(dst, pick(r, classes)...)
	dst = append(dst, fieldSep)
	dst = append(dst, pick(r, wards)...)
	dst = append(dst, compSep)
	dst = appendDigits(dst, r, 3)
	dst = append(dst, compSep, byte('A'+r.IntN(4)))
	dst = append(dst, "^HOSP||||"...)
	dst = appendDigits(dst, r, 6)
	dst = append(dst, compSep)
	dst = append(dst, pick(r, lastNames)...)
	dst = append(dst, compSep)
	dst = append(dst, pick(r, firstNames)...)
	dst = append(dst, "|||MED||||1||||IN|"...)
	dst = appendDigits(dst, r, 9)
	dst = append(dst, segmentEnd)

	dst = append(dst, "OBR|1|"...)
	dst = appendDigits(dst, r, 8)
	dst = append(dst, fieldSep)
	dst = appendDigits(dst, r, 8)
	dst = append(dst, "|80048^BASIC METABOLIC PANEL^CPT|||"...)
	dst = ts.AppendFormat(dst, "20060102150405")
	dst = append(dst, segmentEnd)

	for i := 1; ; i++ {
		before := len(dst)
		dst = g.obx(dst, i, ts)
		if i > minOBX && len(dst)-start+minNTE > size {
			dst = dst[:before]
			break
		}
	}
	dst = append(dst, "NTE|1||"...)
	for len(dst)-start < size-1 {
		if r.IntN(6) == 0 {
			dst = append(dst, ' ')
		} else {
			dst = append(dst, byte('A'+r.IntN(26)))
		}
	}
	return append(dst, segmentEnd)
}

// obx appends OBX segment i: a numeric result of one lab test with its
// units, normal range and abnormal flag.
func (g *generator) obx(dst []byte, i int, ts time.Time) []byte {
	r := g.rng
	t := labTests[r.IntN(len(labTests))]
	v := math.Round((t.lo+(t.hi-t.lo)*(1.4*r.Float64()-0.2))*10) / 10 // as written, one decimal
	flag := "N"
	switch {
	case v < t.lo:
		flag = "L"
	case v > t.hi:
		flag = "H"
	}
	dst = append(dst, "OBX|"...)
	dst = strconv.AppendInt(dst, int64(i), 10)
	dst = append(dst, "|NM|"...)
	dst = append(dst, t.code...)
	dst = append(dst, compSep)
	dst = append(dst, t.name...)
	dst = append(dst, "^LN||"...)
	dst = strconv.AppendFloat(dst, v, 'f', 1, 64)
	dst = append(dst, fieldSep)
	dst = append(dst, t.units...)
	dst = append(dst, fieldSep)
	dst = strconv.AppendFloat(dst, t.lo, 'f', -1, 64)
	dst = append(dst, '-')
	dst = strconv.AppendFloat(dst, t.hi, 'f', -1, 64)
	dst = append(dst, fieldSep)
	dst = append(dst, flag...)
	dst = append(dst, "|||F|||"...)
	dst = ts.AppendFormat(dst, "20060102150405")
	return append(dst, segmentEnd)
}

func pick(r *rand.Rand, from []string) string { return from[r.IntN(len(from))] }

func appendDigits(dst []byte, r *rand.Rand, n int) []byte {
	for range n {
		dst = append(dst, byte('0'+r.IntN(10)))
	}
	return dst
}

// transform appends to dst what route (from 1) sends of message src. It
// rewrites four segments, as the seed's T4 transforms do on average: MSH
// is addressed to the route (sending application ROUTER, receiving
// application OUT<route> at DEST<route>, control id suffixed with the
// route), PID-5's name components are rotated (one or two places by
// route), PV1-2's patient class is mapped to the receiver's codes, and
// one OBX, picked by route, has its LOINC code mapped to a local code
// (99LOC). Every other segment is copied.
func transform(dst, src []byte, route int) []byte {
	obxs := bytes.Count(src, []byte("\rOBX|"))
	obx := 0
	target := (route-1)%max(obxs, 1) + 1
	for len(src) > 0 {
		seg := src
		if i := bytes.IndexByte(src, segmentEnd); i >= 0 {
			seg, src = src[:i], src[i+1:]
		} else {
			src = nil
		}
		switch {
		case bytes.HasPrefix(seg, []byte("MSH|")):
			dst = editFields(dst, seg, func(dst []byte, i int, f []byte) []byte {
				switch i { // MSH-n is field n-1: MSH-1 is the separator itself
				case 2:
					return append(dst, "ROUTER"...)
				case 4:
					return strconv.AppendInt(append(dst, "OUT"...), int64(route), 10)
				case 5:
					return strconv.AppendInt(append(dst, "DEST"...), int64(route), 10)
				case 9:
					return strconv.AppendInt(append(append(dst, f...), '-'), int64(route), 10)
				}
				return append(dst, f...)
			})
		case bytes.HasPrefix(seg, []byte("PID|")):
			dst = editFields(dst, seg, func(dst []byte, i int, f []byte) []byte {
				if i == 5 {
					return rotateComponents(dst, f, 1+(route-1)%2)
				}
				return append(dst, f...)
			})
		case bytes.HasPrefix(seg, []byte("PV1|")):
			dst = editFields(dst, seg, func(dst []byte, i int, f []byte) []byte {
				if i == 2 {
					if c, ok := patientClass[string(f)]; ok {
						return append(dst, c...)
					}
				}
				return append(dst, f...)
			})
		case bytes.HasPrefix(seg, []byte("OBX|")):
			if obx++; obx != target {
				dst = append(dst, seg...)
				break
			}
			dst = editFields(dst, seg, func(dst []byte, i int, f []byte) []byte {
				if i != 3 {
					return append(dst, f...)
				}
				code, _, _ := bytes.Cut(f, []byte{compSep})
				_, name, _ := bytes.Cut(f[len(code):], []byte{compSep})
				name, _, _ = bytes.Cut(name, []byte{compSep})
				dst = strconv.AppendInt(append(dst, 'R'), int64(route), 10)
				dst = append(dst, '-')
				for _, b := range code {
					if b != '-' {
						dst = append(dst, b)
					}
				}
				dst = append(append(append(dst, compSep), name...), compSep)
				return append(dst, "99LOC"...)
			})
		default:
			dst = append(dst, seg...)
		}
		dst = append(dst, segmentEnd)
	}
	return dst
}

// editFields appends seg to dst with each of its fields, numbered from 0
// (the segment's name), appended by edit.
func editFields(dst, seg []byte, edit func(dst []byte, i int, field []byte) []byte) []byte {
	for i := 0; ; i++ {
		f, rest, more := bytes.Cut(seg, []byte{fieldSep})
		if i > 0 {
			dst = append(dst, fieldSep)
		}
		dst = edit(dst, i, f)
		if !more {
			return dst
		}
		seg = rest
	}
}

// rotateComponents appends f with its components rotated left by n:
// LAST^FIRST^M by 1 is FIRST^M^LAST.
func rotateComponents(dst, f []byte, n int) []byte {
	n %= bytes.Count(f, []byte{compSep}) + 1
	cut := -1
	for range n {
		cut += 1 + bytes.IndexByte(f[cut+1:], compSep)
	}
	if cut < 0 {
		return append(dst, f...)
	}
	dst = append(append(dst, f[cut+1:]...), compSep)
	return append(dst, f[:cut]...)
}
