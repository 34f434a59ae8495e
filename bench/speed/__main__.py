from bench.speed import main

main()
