! A deadlock: thread 0 takes a simple (not nestable) lock twice; the other thread
! waits for it at the end of the loop.
program pimp
  use omp_lib
  implicit none
  integer(8) :: n, i
  real(8) :: h, s, x
  integer(omp_lock_kind) :: lck
  read (*, *) n
  call omp_init_lock(lck)
  h = 1.0d0 / real(n, 8)
  s = 0.0d0
  !$omp parallel do private(x) reduction(+:s)
  do i = 1, n
    x = h * (real(i, 8) - 0.5d0)
    s = s + 4.0d0 / (1.0d0 + x * x)
    if (i == 1) then
      call omp_set_lock(lck)
      call omp_set_lock(lck)
    end if
  end do
  !$omp end parallel do
  write (*, '(F0.10)') h * s
end program pimp
