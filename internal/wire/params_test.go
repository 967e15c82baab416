package wire

import (
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// param is one parameter of a hand-built COM_STMT_EXECUTE.
type param struct {
	typ      byte
	unsigned bool
	null     bool
	value    []byte // binary form, omitted when null
}

// executeBlock encodes params as the part of COM_STMT_EXECUTE that
// decodeArguments reads; bound says whether the types are included.
func executeBlock(params []param, bound bool) []byte {
	nulls := make([]byte, (len(params)+7)/8)
	var types, values []byte
	for i, p := range params {
		if p.null {
			nulls[i/8] |= 1 << (i % 8)
		} else {
			values = append(values, p.value...)
		}
		flag := byte(0)
		if p.unsigned {
			flag = unsignedParam
		}
		types = append(types, p.typ, flag)
	}
	b := append([]byte(nil), nulls...)
	if bound {
		b = append(append(b, 1), types...)
	} else {
		b = append(b, 0)
	}
	return append(b, values...)
}

func le(n uint64, size int) []byte {
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], n)
	return buf[:size]
}

func lenenc(s string) []byte { return append(gomysql.PutLengthEncodedInt(uint64(len(s))), s...) }

func TestDecodeArguments(t *testing.T) {
	params := []param{
		{typ: gomysql.MYSQL_TYPE_TINY, value: []byte{0xff}},                  // -1
		{typ: gomysql.MYSQL_TYPE_TINY, unsigned: true, value: []byte{0xff}},  // 255
		{typ: gomysql.MYSQL_TYPE_SHORT, value: le(uint64(0xfffe), 2)},        // -2
		{typ: gomysql.MYSQL_TYPE_LONG, value: le(uint64(math.MaxUint32), 4)}, // -1
		{typ: gomysql.MYSQL_TYPE_INT24, unsigned: true, value: le(70000, 4)}, // 70000
		{typ: gomysql.MYSQL_TYPE_LONGLONG, value: le(math.MaxUint64, 8)},     // -1
		{typ: gomysql.MYSQL_TYPE_LONGLONG, unsigned: true, value: le(math.MaxUint64, 8)},
		{typ: gomysql.MYSQL_TYPE_FLOAT, value: le(uint64(math.Float32bits(0.5)), 4)},
		{typ: gomysql.MYSQL_TYPE_DOUBLE, value: le(math.Float64bits(-2.25), 8)},
		{typ: gomysql.MYSQL_TYPE_NEWDECIMAL, value: lenenc("-1.50")},
		{typ: gomysql.MYSQL_TYPE_VAR_STRING, value: lenenc("it's")},
		{typ: gomysql.MYSQL_TYPE_BLOB, value: lenenc("\x00\x01")},
		{typ: gomysql.MYSQL_TYPE_LONGLONG, null: true},
		{typ: gomysql.MYSQL_TYPE_NULL},
		{typ: gomysql.MYSQL_TYPE_DATE, value: []byte{4, 0xe8, 0x07, 2, 29}},
		{typ: gomysql.MYSQL_TYPE_DATETIME, value: []byte{11, 0xe8, 0x07, 2, 29, 13, 4, 5, 6, 0, 0, 0}},
		{typ: gomysql.MYSQL_TYPE_DATETIME, value: []byte{0}},
		{typ: gomysql.MYSQL_TYPE_TIME, value: []byte{8, 1, 1, 0, 0, 0, 2, 3, 4}},
		{typ: gomysql.MYSQL_TYPE_STRING, value: lenenc(string(make([]byte, 300)))}, // 2-byte length
	}
	want := []any{
		int64(-1), uint64(255), int64(-2), int64(-1), uint64(70000), int64(-1), uint64(math.MaxUint64),
		float32(0.5), -2.25, decimalText("-1.50"), "it's", []byte{0, 1}, nil, nil,
		time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 2, 29, 13, 4, 5, 6000, time.UTC),
		zeroDateText("0000-00-00 00:00:00"),
		-(26*time.Hour + 3*time.Minute + 4*time.Second),
		string(make([]byte, 300)),
	}
	st := &prepared{offsets: make([]uint32, len(params))}
	got, err := decodeArguments(st, executeBlock(params, true))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}

	// A later execution may omit the types: the ones sent before apply.
	again, err := decodeArguments(st, executeBlock(params, false))
	if err != nil || !reflect.DeepEqual(again, want) {
		t.Errorf("without types: got %#v, %v, want the same arguments", again, err)
	}
}

func TestDecodeArgumentsAllNullWithoutTypes(t *testing.T) {
	st := &prepared{offsets: []uint32{0, 1}}
	got, err := decodeArguments(st, []byte{0b11, 0})
	if want := []any{nil, nil}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, %v, want %#v", got, err, want)
	}
}

func TestDecodeArgumentsLongData(t *testing.T) {
	st := &prepared{offsets: []uint32{0, 1}, longData: map[int][]byte{0: []byte("long text")}}
	// Parameter 0 came by COM_STMT_SEND_LONG_DATA, so only parameter 1 has a value here.
	b := executeBlock([]param{{typ: gomysql.MYSQL_TYPE_STRING}, {typ: gomysql.MYSQL_TYPE_TINY, value: []byte{7}}}, true)
	got, err := decodeArguments(st, b)
	if want := []any{"long text", int64(7)}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, %v, want %#v", got, err, want)
	}
}

func TestDecodeArgumentsErrors(t *testing.T) {
	one := func(p param) []byte { return executeBlock([]param{p}, true) }
	for _, tc := range []struct {
		name     string
		block    []byte
		wantCode uint16
	}{
		{"empty", nil, gomysql.ER_MALFORMED_PACKET},
		{"no bound flag", []byte{0}, gomysql.ER_MALFORMED_PACKET},
		{"types never sent", []byte{0, 0, 1, 2}, gomysql.ER_MALFORMED_PACKET},
		{"short integer", one(param{typ: gomysql.MYSQL_TYPE_LONGLONG, value: []byte{1, 2}}), gomysql.ER_MALFORMED_PACKET},
		{"string longer than packet", one(param{typ: gomysql.MYSQL_TYPE_STRING, value: []byte{5, 'a'}}), gomysql.ER_MALFORMED_PACKET},
		{"huge length", one(param{typ: gomysql.MYSQL_TYPE_STRING, value: append([]byte{0xfe}, le(math.MaxUint64, 8)...)}), gomysql.ER_MALFORMED_PACKET},
		{"NULL marker as length", one(param{typ: gomysql.MYSQL_TYPE_STRING, value: []byte{0xfb}}), gomysql.ER_MALFORMED_PACKET},
		{"bad date length", one(param{typ: gomysql.MYSQL_TYPE_DATE, value: []byte{3, 1, 2, 3}}), gomysql.ER_MALFORMED_PACKET},
		{"decimal that is not a number", one(param{typ: gomysql.MYSQL_TYPE_NEWDECIMAL, value: lenenc("1 OR 1=1")}), gomysql.ER_WRONG_ARGUMENTS},
		{"DECIMAL past DOUBLE's range", one(param{typ: gomysql.MYSQL_TYPE_NEWDECIMAL, value: lenenc("-1e400")}), gomysql.ER_ILLEGAL_VALUE_FOR_TYPE},
		{"TIME out of range", one(param{typ: gomysql.MYSQL_TYPE_TIME, value: []byte{8, 0, 35, 0, 0, 0, 0, 0, 0}}), gomysql.ER_WRONG_ARGUMENTS},
		{"unknown type", one(param{typ: 100, value: lenenc("x")}), gomysql.ER_WRONG_ARGUMENTS},
	} {
		st := &prepared{offsets: []uint32{0}}
		if tc.name == "types never sent" {
			st.offsets = []uint32{0, 1}
		}
		_, err := decodeArguments(st, tc.block)
		var me *gomysql.MyError
		if !errors.As(err, &me) || me.Code != tc.wantCode {
			t.Errorf("%s: got %v, want error %d", tc.name, err, tc.wantCode)
		}
	}
}

// TestDecimalPastDoubleRange: a DECIMAL parameter with an exponent past
// DOUBLE's range is refused with the parser's 1367 (22007) for the
// literal it would become, naming the value as sent, sign included (the
// parser names "1e400" for -1e400); one with an exponent within the range,
// or an underflow, which the parser reads as 0, is kept. Before, -1e400 went
// to the parser, whose message dropped the sign.
func TestDecimalPastDoubleRange(t *testing.T) {
	for text, want := range map[string]string{
		"-1e400":  "Illegal double '-1e400' value found during parsing",
		"1E+400":  "Illegal double '1E+400' value found during parsing",
		"+.5e309": "Illegal double '+.5e309' value found during parsing",
	} {
		_, err := decodeArguments(&prepared{offsets: []uint32{0}},
			executeBlock([]param{{typ: gomysql.MYSQL_TYPE_NEWDECIMAL, value: lenenc(text)}}, true))
		var me *gomysql.MyError
		if !errors.As(err, &me) || me.Code != gomysql.ER_ILLEGAL_VALUE_FOR_TYPE || me.State != "22007" || me.Message != want {
			t.Errorf("%s: got %v, want 1367 (22007) %q", text, err, want)
		}
	}
	for _, text := range []string{"-1e308", "1e-400", "123456789012345678901234567890"} {
		got, err := decodeArguments(&prepared{offsets: []uint32{0}},
			executeBlock([]param{{typ: gomysql.MYSQL_TYPE_NEWDECIMAL, value: lenenc(text)}}, true))
		if err != nil || !reflect.DeepEqual(got, []any{decimalText(text)}) {
			t.Errorf("%s: got %v, %v, want it kept", text, got, err)
		}
	}
}

// TestTemporalComponentsInRange: a binary DATE, DATETIME, TIMESTAMP or
// TIME parameter with a component out of its range is refused with 1210
// (MySQL reads it as NULL), and the largest valid values are kept. Before,
// time.Date carried 2024-13-40 25:61:61 into 2025-02-10 02:02:01, and a
// TIME's hours, minutes and microseconds were added up unchecked.
func TestTemporalComponentsInRange(t *testing.T) {
	dt := func(year uint16, month, day, hour, minute, second byte, micro uint32) []byte {
		return append([]byte{11, byte(year), byte(year >> 8), month, day, hour, minute, second}, le(uint64(micro), 4)...)
	}
	tm := func(sign byte, days uint32, hour, minute, second byte, micro uint32) []byte {
		b := append([]byte{12, sign}, le(uint64(days), 4)...)
		return append(append(b, hour, minute, second), le(uint64(micro), 4)...)
	}
	refused := []struct {
		name string
		p    param
		msg  string
	}{
		{"the review's packet", param{typ: gomysql.MYSQL_TYPE_DATETIME, value: []byte{7, 0xe8, 0x07, 13, 40, 25, 61, 61}},
			"DATETIME parameter 2024-13-40 25:61:61.000000 is not a valid date and time"},
		{"month 13", param{typ: gomysql.MYSQL_TYPE_DATE, value: []byte{4, 0xe8, 0x07, 13, 1}},
			"DATE parameter 2024-13-01 00:00:00.000000 is not a valid date and time"},
		{"day 32", param{typ: gomysql.MYSQL_TYPE_DATE, value: []byte{4, 0xe8, 0x07, 1, 32}},
			"DATE parameter 2024-01-32 00:00:00.000000 is not a valid date and time"},
		{"February 30", param{typ: gomysql.MYSQL_TYPE_TIMESTAMP, value: dt(2024, 2, 30, 0, 0, 0, 0)},
			"TIMESTAMP parameter 2024-02-30 00:00:00.000000 is not a valid date and time"},
		{"year 10000", param{typ: gomysql.MYSQL_TYPE_DATETIME, value: dt(10000, 1, 1, 0, 0, 0, 0)},
			"DATETIME parameter 10000-01-01 00:00:00.000000 is not a valid date and time"},
		{"hour 24", param{typ: gomysql.MYSQL_TYPE_DATETIME, value: dt(2024, 1, 1, 24, 0, 0, 0)},
			"DATETIME parameter 2024-01-01 24:00:00.000000 is not a valid date and time"},
		{"minute 60", param{typ: gomysql.MYSQL_TYPE_DATETIME, value: dt(2024, 1, 1, 0, 60, 0, 0)},
			"DATETIME parameter 2024-01-01 00:60:00.000000 is not a valid date and time"},
		{"second 60", param{typ: gomysql.MYSQL_TYPE_DATETIME, value: dt(2024, 1, 1, 0, 0, 60, 0)},
			"DATETIME parameter 2024-01-01 00:00:60.000000 is not a valid date and time"},
		{"a million microseconds", param{typ: gomysql.MYSQL_TYPE_DATETIME, value: dt(2024, 1, 1, 0, 0, 0, 1000000)},
			"DATETIME parameter 2024-01-01 00:00:00.1000000 is not a valid date and time"},
		{"TIME hour 24", param{typ: gomysql.MYSQL_TYPE_TIME, value: tm(0, 0, 24, 0, 0, 0)},
			"TIME parameter of sign 0, 0 days, 24:00:00.000000 is not a valid time"},
		{"TIME minute 60", param{typ: gomysql.MYSQL_TYPE_TIME, value: tm(0, 0, 1, 60, 0, 0)},
			"TIME parameter of sign 0, 0 days, 01:60:00.000000 is not a valid time"},
		{"TIME second 60", param{typ: gomysql.MYSQL_TYPE_TIME, value: tm(1, 0, 1, 0, 60, 0)},
			"TIME parameter of sign 1, 0 days, 01:00:60.000000 is not a valid time"},
		{"TIME a million microseconds", param{typ: gomysql.MYSQL_TYPE_TIME, value: tm(0, 0, 0, 0, 0, 1000000)},
			"TIME parameter of sign 0, 0 days, 00:00:00.1000000 is not a valid time"},
		{"TIME sign 2", param{typ: gomysql.MYSQL_TYPE_TIME, value: tm(2, 0, 1, 0, 0, 0)},
			"TIME parameter of sign 2, 0 days, 01:00:00.000000 is not a valid time"},
		{"TIME 839 hours", param{typ: gomysql.MYSQL_TYPE_TIME, value: tm(0, 34, 23, 0, 0, 0)},
			"TIME parameter 839:00:00 is out of range"},
		{"TIME 35 days", param{typ: gomysql.MYSQL_TYPE_TIME, value: tm(0, 35, 0, 0, 0, 0)},
			"TIME parameter of 35 days is out of range"},
	}
	for _, c := range refused {
		_, err := decodeArguments(&prepared{offsets: []uint32{0}}, executeBlock([]param{c.p}, true))
		want := "Incorrect arguments to mysqld_stmt_execute: " + c.msg
		var me *gomysql.MyError
		if !errors.As(err, &me) || me.Code != gomysql.ER_WRONG_ARGUMENTS || me.State != "HY000" || me.Message != want {
			t.Errorf("%s: got %v, want 1210 (HY000) %q", c.name, err, want)
		}
	}
	kept := []struct {
		p    param
		want any
	}{
		{param{typ: gomysql.MYSQL_TYPE_DATETIME, value: dt(9999, 12, 31, 23, 59, 59, 999999)}, time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)},
		{param{typ: gomysql.MYSQL_TYPE_DATE, value: []byte{4, 0xe8, 0x07, 2, 29}}, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
		{param{typ: gomysql.MYSQL_TYPE_TIME, value: tm(1, 34, 22, 59, 59, 999999)}, -(838*time.Hour + 59*time.Minute + 59*time.Second + 999999*time.Microsecond)},
		{param{typ: gomysql.MYSQL_TYPE_TIME, value: tm(0, 0, 23, 59, 59, 0)}, 23*time.Hour + 59*time.Minute + 59*time.Second},
	}
	for _, c := range kept {
		got, err := decodeArguments(&prepared{offsets: []uint32{0}}, executeBlock([]param{c.p}, true))
		if err != nil || !reflect.DeepEqual(got, []any{c.want}) {
			t.Errorf("%x: got %v, %v, want %v", c.p.value, got, err, c.want)
		}
	}
}
