package dlist

import (
	"slices"
	"testing"
)

type elem struct {
	Links[elem]
	v int
}

// TestUnlink: taking an element out of the head, the middle, the tail or
// a list of one leaves the others linked in order both ways, and the
// element its own links.
func TestUnlink(t *testing.T) {
	cases := []struct {
		name string
		n    int
		drop int
		want []int
	}{
		{"head", 3, 0, []int{1, 2}},
		{"middle", 3, 1, []int{0, 2}},
		{"tail", 3, 2, []int{0, 1}},
		{"only", 1, 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			es := make([]elem, c.n)
			var head, tail *elem
			for i := range es {
				es[i].v = i
				if tail != nil {
					tail.Next, es[i].Prev = &es[i], tail
				} else {
					head = &es[i]
				}
				tail = &es[i]
			}
			x := &es[c.drop]
			prev, next := x.Prev, x.Next
			Unlink(&head, &tail, x)
			var fwd, back []int
			for e := head; e != nil; e = e.Next {
				fwd = append(fwd, e.v)
			}
			for e := tail; e != nil; e = e.Prev {
				back = append([]int{e.v}, back...)
			}
			if !slices.Equal(fwd, c.want) || !slices.Equal(back, c.want) {
				t.Errorf("forward %v, backward %v, want %v", fwd, back, c.want)
			}
			if x.Prev != prev || x.Next != next {
				t.Error("the element's own links changed")
			}
		})
	}
}
