fun main() {
    val (mode, data) = generateSequence(::readLine).joinToString(" ").trim().split(Regex("\\s+"))
    if (mode == "encode") {
        println(data.map { String.format("%02d", it - 'a' + 1) }.joinToString(""))
    } else {
        println(data.chunked(2).map { 'a' + it.toInt() - 1 }.joinToString(""))
    }
}
