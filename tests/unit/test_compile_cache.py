from grader.judge.compile_cache import normalise_c


def test_comments_are_blanked_but_lines_kept():
    a = b"// alice\nint main() { return 0; /* x\ny */ }\n"
    b = b"// bob was here\nint main() { return 0; /* other\ntext */ }\n"
    assert normalise_c(a) == normalise_c(b)
    assert normalise_c(a).count(b"\n") == a.count(b"\n")  # __LINE__ unchanged


def test_code_and_literals_still_count():
    assert normalise_c(b"int x = 1;") != normalise_c(b"int x = 2;")
    # comment markers inside literals are code, not comments
    assert normalise_c(b'puts("// a");') != normalise_c(b'puts("// b");')
    assert normalise_c(b"char c = '/'; // x") == normalise_c(b"char c = '/'; // y")
    assert normalise_c(b'puts("a\\"// b");') != normalise_c(b'puts("a\\"// c");')


def test_unsure_sources_are_not_normalised():
    for src in (b"// a \\\nint x;", b'auto s = R"(// x)";', b'puts(__TIME__);',
                b"/* unterminated", b'"unterminated\n'):
        assert normalise_c(src) is None
