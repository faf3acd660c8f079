-- Source of input/task_demo_library/context/db/library.db (kept here so the binary is reviewable).
-- Rebuild: rm -f input/task_demo_library/context/db/library.db && sqlite3 input/task_demo_library/context/db/library.db < sources/library.sql
CREATE TABLE members (member_id INTEGER PRIMARY KEY, name TEXT NOT NULL, joined TEXT);
CREATE TABLE books (book_id INTEGER PRIMARY KEY, title TEXT NOT NULL, genre TEXT);
CREATE TABLE loans (loan_id INTEGER PRIMARY KEY, member_id INTEGER REFERENCES members, book_id INTEGER REFERENCES books, loan_date TEXT, returned INTEGER);
INSERT INTO members VALUES (1,'Ada Byrne','2021-04-02'),(2,'Bruno Costa','2022-09-15'),(3,'Chen Wei','2023-01-20'),(4,'Dana Ortiz','2023-06-11'),(5,'Emil Novak','2024-02-29');
INSERT INTO books VALUES (10,'The Quiet Harbour','Fiction'),(11,'Soil and Stone','Science'),(12,'A Short History of Maps','History'),(13,'Night Trains','Fiction'),(14,'Counting Birds','Science'),(15,'Kitchen Chemistry','Science');
INSERT INTO loans VALUES
 (100,1,10,'2023-12-28',1),(101,1,11,'2024-01-05',1),(102,1,12,'2024-02-10',1),(103,1,13,'2024-05-22',0),
 (104,2,14,'2024-03-03',1),(105,2,10,'2024-07-19',1),
 (106,3,15,'2023-11-30',1),(107,3,11,'2023-12-15',1),(108,3,12,'2024-01-02',1),
 (109,4,13,'2024-02-14',1),(110,4,14,'2024-04-01',1),(111,4,15,'2024-06-30',1),(112,4,10,'2024-09-09',0),(113,4,11,'2025-01-03',0),
 (114,5,12,'2024-03-15',1),(115,5,13,'2024-08-08',1),(116,5,14,'2024-12-31',0);
