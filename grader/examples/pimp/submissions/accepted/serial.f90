! Correct, but one thread does all the work (the performance tests score it low).
program pimp
  implicit none
  integer(8) :: n, i
  real(8) :: h, s, x
  read (*, *) n
  h = 1.0d0 / real(n, 8)
  s = 0.0d0
  do i = 1, n
    x = h * (real(i, 8) - 0.5d0)
    s = s + 4.0d0 / (1.0d0 + x * x)
  end do
  write (*, '(F0.10)') h * s
end program pimp
