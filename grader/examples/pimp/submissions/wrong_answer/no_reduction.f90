! A data race: s is shared and both threads add to it without a reduction, so one
! thread's additions overwrite the other's.
program pimp
  implicit none
  integer(8) :: n, i
  real(8) :: h, s, x
  read (*, *) n
  h = 1.0d0 / real(n, 8)
  s = 0.0d0
  !$omp parallel do private(x) schedule(dynamic, 100000)
  do i = 1, n
    x = h * (real(i, 8) - 0.5d0)
    s = s + 4.0d0 / (1.0d0 + x * x)
  end do
  !$omp end parallel do
  write (*, '(F0.10)') h * s
end program pimp
