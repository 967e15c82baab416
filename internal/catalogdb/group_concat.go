package catalogdb

import (
	"context"
	"math"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// GROUP_CONCAT's result is cut at the session's group_concat_max_len
// (1024 bytes by default), in this engine as in MySQL. A session may set
// it to at most maxGroupConcatLen: package sqlrewrite's size guard bounds a
// GROUP_CONCAT's result by that, whatever rows it reads. go-mysql-server
// does not raise MySQL's warning 1260 (Row N was cut by GROUP_CONCAT())
// when it cuts one, nor tell that it did, so no such warning is raised.
const (
	minGroupConcatLen = 4
	maxGroupConcatLen = 1 << 20
)

// groupConcatMaxLenVariable is group_concat_max_len as MySQL declares it,
// but within [minGroupConcatLen, maxGroupConcatLen] (groupConcatLenType).
func groupConcatMaxLenVariable() sql.SystemVariable {
	return &sql.MysqlSystemVariable{
		Name:              "group_concat_max_len",
		Scope:             sql.GetMysqlScope(sql.SystemVariableScope_Both),
		Dynamic:           true,
		SetVarHintApplies: true,
		Type:              groupConcatLenType{types.NewSystemUintType("group_concat_max_len", minGroupConcatLen, maxGroupConcatLen)},
		Default:           uint64(1024),
	}
}

// groupConcatLenType is group_concat_max_len's type: a whole number
// outside its range is set to the nearest end of it, with MySQL's warning
// 1292 (Truncated incorrect group_concat_max_len value: '...'), as MySQL
// sets a value past its own range; any other value is refused as
// go-mysql-server refuses it (1231).
type groupConcatLenType struct{ sql.SystemVariableType }

// Convert implements sql.Type.
func (t groupConcatLenType) Convert(ctx context.Context, v any) (any, sql.ConvertInRange, error) {
	out, inRange, err := t.SystemVariableType.Convert(ctx, v)
	if err == nil {
		return out, inRange, nil
	}
	if _, isText := v.(string); isText {
		return out, inRange, err
	}
	f, _, ferr := types.Float64.Convert(ctx, v)
	n, isFloat := f.(float64)
	if ferr != nil || !isFloat || n != math.Trunc(n) {
		return out, inRange, err
	}
	if sctx, ok := ctx.(*sql.Context); ok {
		sctx.Warn(1292, "Truncated incorrect group_concat_max_len value: '%v'", v)
	}
	return uint64(min(max(n, minGroupConcatLen), maxGroupConcatLen)), sql.InRange, nil
}
