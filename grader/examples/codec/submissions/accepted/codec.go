package main

import (
	"fmt"
	"strconv"
	"strings"
)

func main() {
	var mode, data string
	fmt.Scan(&mode, &data)
	var b strings.Builder
	if mode == "encode" {
		for _, c := range data {
			fmt.Fprintf(&b, "%02d", c-'a'+1)
		}
	} else {
		for i := 0; i+1 < len(data); i += 2 {
			n, _ := strconv.Atoi(data[i : i+2])
			b.WriteByte(byte('a' + n - 1))
		}
	}
	fmt.Println(b.String())
}
