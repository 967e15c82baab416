package sqlrewrite

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// originBucket recognises the bins BI tools write,
// FLOOR((col - o) / w) * w + o (also o + …, and FLOOR(col / w) * w + 0),
// with o and w numbers, the multiplier equal to w and the two origins
// equal: buckets of width w aligned at o. ok is false for any other shape;
// err is set for that shape with a bad column or width.
func (sc *scope) originBucket(e ast.ExprNode, clause string) (b *Bucketing, ok bool, err error) {
	sum, isSum := unparen(e).(*ast.BinaryOperationExpr)
	if !isSum || sum.Op != opcode.Plus {
		return nil, false, nil
	}
	inner, outer := sum.L, sum.R
	if _, isNum := literal(inner); isNum {
		inner, outer = outer, inner
	}
	o2, isNum := literal(outer)
	if !isNum || o2.IsText || o2.Null {
		return nil, false, nil
	}
	x, w, mult, isBucket := bucketParts(inner)
	if !isBucket || mult == nil {
		return nil, false, nil
	}
	o1 := Value{}
	var originLiteral ast.ExprNode
	x = unparen(x)
	if d, isDiff := x.(*ast.BinaryOperationExpr); isDiff && d.Op == opcode.Minus {
		v, isNum := literal(d.R)
		if !isNum || v.IsText || v.Null {
			return nil, false, nil
		}
		x, o1, originLiteral = unparen(d.L), v, d.R
	}
	c, isCol := x.(*ast.ColumnNameExpr)
	if !isCol || o1.Num != o2.Num {
		return nil, false, nil
	}
	shaped := &ast.BinaryOperationExpr{Op: opcode.Mul, L: &ast.FuncCallExpr{FnName: ast.NewCIStr("floor"),
		Args: []ast.ExprNode{&ast.BinaryOperationExpr{Op: opcode.Div, L: c, R: w}}}, R: mult}
	b, err = sc.bucket(shaped, clause)
	if err != nil {
		return nil, true, err
	}
	b.Origin = o1.Num
	if originLiteral != nil && b.Exact {
		// x - o is a DECIMAL only for a decimal o: MySQL computes
		// x - 1.5e0 as a DOUBLE.
		if text := decimalLiteral(originLiteral); text == "" {
			b.Exact, b.WidthDecimal = false, ""
		} else if o1.Num != 0 {
			b.OriginDecimal = text
		}
	}
	// … + o is a DECIMAL only for a decimal o too.
	b.KeyDecimal = b.KeyDecimal && b.Exact && decimalLiteral(outer) != ""
	b.Type = bucketLabelType(b.ExactValues, false, w, mult, originLiteral, outer)
	return b, true, nil
}
