// Package dlist holds the links of an intrusive doubly linked list, and its
// one unlink: tcpasm's queue of out-of-order pages and the reassembly
// connection table's lists of connections both take elements out of the
// middle of their lists, and would otherwise each write it.
//
// An element embeds Links, which makes it a Node; the list is its head and
// tail, wherever its owner keeps them. Single goroutine, as its users.
package dlist

// Links are an element's neighbours in its list, nil at either end.
type Links[T any] struct{ Prev, Next *T }

// Link returns l. Promoted to the element that embeds l, it is how Unlink
// reaches the links of an element's neighbours.
func (l *Links[T]) Link() *Links[T] { return l }

// Node is a pointer to an element that embeds Links.
type Node[T any] interface {
	*T
	Link() *Links[T]
}

// Unlink takes x out of the list from *head to *tail. x keeps its own
// links: a caller walking on from x reads them, one reusing x clears them.
func Unlink[T any, P Node[T]](head, tail **T, x P) {
	l := x.Link()
	if l.Prev != nil {
		P(l.Prev).Link().Next = l.Next
	} else {
		*head = l.Next
	}
	if l.Next != nil {
		P(l.Next).Link().Prev = l.Prev
	} else {
		*tail = l.Prev
	}
}
